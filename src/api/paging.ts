import * as z from 'zod';
import { TIMESTAMP_FORMAT_MESSAGE, parseTimestamp, timestampSchema } from './timestamp.ts';

/**
 * The text of one query parameter. A parameter sent twice arrives as an array, one left out as
 * undefined (a required one then reaches this): both are told in words, not as a type mismatch.
 */
export function queryText(name: string, expected: string) {
  return z.string({
    error: (issue) => (issue.input === undefined ? `${name} is required` : `must be given once, ${expected}`),
  });
}

/** A non-negative integer sent as a query string, checked against bounds. */
export function intQueryParam(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `${min} to ${max}`;
  const tooBig = max === Number.MAX_SAFE_INTEGER ? `must be at most ${max}` : `must be ${range}`;
  return queryText('a value', `an integer ${range}`)
    .regex(/^[0-9]+$/, `must be an integer, ${range}`)
    .transform(Number)
    .pipe(
      // Digits only by now: int() fails only past 2^53 - 1, where max() fails first and stops.
      z.number().min(min, `must be ${range}`).max(max, { message: tooBig, abort: true }).int(),
    );
}

/** A timestamp sent as a query parameter: the checks and description of timestampSchema. */
function timestampParam(name: string) {
  return queryText(name, 'a UTC timestamp')
    .refine((s) => parseTimestamp(s) !== undefined, { message: TIMESTAMP_FORMAT_MESSAGE })
    .meta(timestampSchema.meta() ?? {});
}

/** Records list, record changes and schema changes accept `limit` 1 to 100. */
export const MAX_PAGE_LIMIT = 100;
export const DEFAULT_PAGE_LIMIT = 100;

export const changesQuerySchema = z.strictObject({
  since: timestampParam('since').meta({ description: 'Return changes at or after this time (required).' }),
  asOf: timestampParam('asOf')
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
