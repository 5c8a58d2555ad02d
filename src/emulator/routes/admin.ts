import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { formatTimestamp, moduleNameSchema, parseTimestamp } from '../../api/index.ts';
import { clockUpdateSchema, moduleCreateSchema } from '../admin-contract.ts';
import { CLOCK_MAX_MS, CLOCK_MIN_MS } from '../clock.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import { faultSettingsSchema } from '../faults.ts';
import { requireBody } from '../http/body-parsers.ts';
import { parseInput } from '../http/define-route.ts';
import { moduleView, workspaceView } from '../schema-views.ts';
import { loadSeed } from '../seed.ts';
import { createModule, deleteModule } from '../store/schema-store.ts';
import { resetWorkspace } from '../workspace-state.ts';

/**
 * The emulator's own surface under `/_emulator/` (the auth hook wants the admin token): modules,
 * reset, seed, faults and the clock. Faults never apply here, so a test can always undo them.
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  const moduleParams = z.strictObject({ name: moduleNameSchema });

  app.post('/_emulator/modules', async (request, reply) => {
    const body = parseInput(moduleCreateSchema, requireBody(request.body), 'body');
    reply.code(201);
    return { data: moduleView(ctx, createModule(ctx, body)) };
  });

  app.delete('/_emulator/modules/:name', async (request) => {
    const { name } = parseInput(moduleParams, request.params, 'path');
    return { data: deleteModule(ctx, name) };
  });

  app.post('/_emulator/reset', async (request) => {
    resetWorkspace(ctx, request.body ?? undefined);
    return { data: workspaceView(ctx) };
  });

  app.post('/_emulator/seed', async (request, reply) => {
    loadSeed(ctx, requireBody(request.body), 'body');
    reply.code(201);
    return { data: workspaceView(ctx) };
  });

  const faultsView = () => ({ data: { ...ctx.faults.settings, injected: ctx.faults.injected } });
  app.get('/_emulator/faults', async () => faultsView());
  app.put('/_emulator/faults', async (request) => {
    ctx.faults.set(parseInput(faultSettingsSchema, requireBody(request.body), 'body'));
    return faultsView();
  });
  app.delete('/_emulator/faults', async () => {
    ctx.faults.reset();
    return faultsView();
  });

  const clockView = () => ({ data: { now: formatTimestamp(ctx.clock.now()), frozen: ctx.clock.frozen } });
  app.get('/_emulator/clock', async () => clockView());
  app.put('/_emulator/clock', async (request) => {
    const body = parseInput(clockUpdateSchema, requireBody(request.body), 'body');
    const frozen = body.frozen ?? ctx.clock.frozen;
    const now = (body.now === undefined ? ctx.clock.now() : parseTimestamp(body.now)!) + (body.advanceMs ?? 0);
    if (now < CLOCK_MIN_MS || now > CLOCK_MAX_MS) {
      const what = body.now === undefined ? `body.advanceMs: the clock would read ${formatTimestamp(now)}` : `body.now: ${body.now}`;
      throw new BadRequestError(
        `${what}, outside the times the clock can take, ${formatTimestamp(CLOCK_MIN_MS)} to ${formatTimestamp(CLOCK_MAX_MS)}`,
      );
    }
    ctx.clock.set(now, frozen);
    return clockView();
  });
  app.delete('/_emulator/clock', async () => {
    ctx.clock.reset();
    return clockView();
  });
}
