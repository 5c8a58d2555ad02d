import * as z from 'zod';
import { timestampSchema } from './timestamp.ts';

/** A non-negative integer sent as a query string, checked against bounds. */
export function intQueryParam(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `${min} to ${max}`;
  return z
    .string()
    .regex(/^[0-9]+$/, `must be an integer, ${range}`)
    .transform(Number)
    .pipe(
      z.number().int().min(min, `must be ${range}`)
        .max(max, max === Number.MAX_SAFE_INTEGER ? `must be at most ${max}` : `must be ${range}`),
    );
}

/** Records list, record changes and schema changes accept `limit` 1 to 100. */
export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 100;

export const changesQuerySchema = z.strictObject({
  since: timestampSchema.meta({ description: 'Return changes at or after this time (required).' }),
  asOf: timestampSchema
    .meta({ description: "Upper bound of the poll: the first page's meta.asOf, sent on every later page." })
    .optional(),
  limit: intQueryParam(1, MAX_PAGE_LIMIT).optional(),
  offset: intQueryParam(0).optional(),
});
export type ChangesQuery = z.output<typeof changesQuerySchema>;

export const fieldsListQuerySchema = z.strictObject({
  limit: intQueryParam(1).optional(),
  offset: intQueryParam(0).optional(),
});
