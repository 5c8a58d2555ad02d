import * as z from 'zod';
import { iconInputSchema, labelsInputSchema, moduleNameSchema, roleSchema, timestampSchema } from '../api/index.ts';

/**
 * Bodies of the emulator's own `/_emulator/` surface (not part of the upstream API). Modules are
 * created here because the spec shows no module endpoints.
 */
export const moduleCreateSchema = z.strictObject({
  name: moduleNameSchema,
  labels: labelsInputSchema.optional(),
  icon: iconInputSchema.optional(),
  isHidden: z.boolean().optional(),
  hideNavigation: z.boolean().optional(),
  openRoles: z.array(roleSchema).optional(),
});
export type ModuleCreate = z.infer<typeof moduleCreateSchema>;

/** Ten years: enough for any test, small enough that the clock stays a valid date. */
const MAX_ADVANCE_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * PUT /_emulator/clock: `{ now, frozen? }` sets the time, `{ advanceMs, frozen? }` moves it
 * forward, `{ frozen }` alone freezes or releases it at the current time. `frozen` omitted
 * keeps the clock's current state.
 */
export const clockUpdateSchema = z
  .strictObject({
    now: timestampSchema.optional(),
    advanceMs: z.number().int('advanceMs must be whole milliseconds').min(0).max(MAX_ADVANCE_MS).optional(),
    frozen: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.now !== undefined && v.advanceMs !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['advanceMs'], message: 'send either now or advanceMs, not both' });
    }
    if (v.now === undefined && v.advanceMs === undefined && v.frozen === undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'send now, advanceMs or frozen' });
    }
  });
export type ClockUpdate = z.infer<typeof clockUpdateSchema>;
