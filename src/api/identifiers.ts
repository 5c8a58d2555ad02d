import * as z from 'zod';

/** Pattern shared by module, table and field names. */
export const NAME_PATTERN = /^[a-z0-9_]+$/;

export const workspaceIdSchema = z
  .string()
  .length(12, 'workspaceId must be exactly 12 characters')
  .regex(/^[a-z0-9]+$/, 'workspaceId must match ^[a-z0-9]+$')
  .meta({ description: 'Workspace id: exactly 12 characters of a-z and 0-9.' });

function nameSchema(what: string) {
  return z
    .string()
    .min(1, `${what} must be 1 to 100 characters`)
    .max(100, `${what} must be 1 to 100 characters`)
    .regex(NAME_PATTERN, `${what} must match ^[a-z0-9_]+$`);
}

export const moduleNameSchema = nameSchema('module name');
export const tableNameSchema = nameSchema('table name');
export const fieldNameSchema = nameSchema('field name');

const POSITIVE = 'record id must be a positive integer';
const TOO_LARGE = 'record id must be at most 2^53 - 1';

/** Record ids are numeric; requests may send them as numbers or as strings of digits. */
export const recordIdInputSchema = z
  .union([
    // int() also bounds the id by 2^53 - 1 (too_big): one check, so such an id is told once.
    z.number()
      .int({ error: (issue) => (issue.code === 'too_big' ? TOO_LARGE : POSITIVE) })
      .positive(POSITIVE),
    z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/, { message: POSITIVE, abort: true })
      .refine((s) => Number(s) <= Number.MAX_SAFE_INTEGER, TOO_LARGE),
  ], { error: 'record id must be a positive integer, as a number or a string of digits' })
  .meta({ description: 'Record id, as a number or a string of digits.' });

/** Record ids in responses are strings of digits. */
export const recordIdSchema = z.string().regex(/^[0-9]+$/);

/** Ids of modules, tables, fields and options: opaque strings assigned by the service. */
export const objectIdSchema = z.string().min(1);

export type RecordIdInput = z.infer<typeof recordIdInputSchema>;

/** Normalises a record id from a request to a number (ids are at most 2^53 - 1). */
export function recordIdToNumber(id: RecordIdInput): number {
  return typeof id === 'number' ? id : Number(id);
}
