import { isDeepStrictEqual } from 'node:util';
import type * as z from 'zod';
import { describeIssues, endpoints, errorBodySchema, type EndpointName } from '../api/index.ts';
import { CheckFailure } from './check-failure.ts';
import { excerpt, type Exchange } from './probe.ts';

/**
 * The assertions of the checks. Each throws a `CheckFailure` holding the exchange, the expected
 * and the actual value, so a failed check shows the request and the difference.
 */

export type EndpointData<N extends EndpointName> = z.output<(typeof endpoints)[N]['response']>;

/** A 2xx answer in the endpoint's response shape (the shape the client and the emulator share); returns it parsed. */
export function expectOk<N extends EndpointName>(ex: Exchange<N>, what = `${ex.method} succeeds`): EndpointData<N> {
  if (ex.status < 200 || ex.status > 299) throw new CheckFailure(what, 'a 2xx status', `HTTP ${ex.status}: ${show(ex.body)}`, ex);
  return expectShape(ex);
}

/** The answer has exactly this status (for the statuses the API description states). */
export function expectStatus(ex: Exchange, status: number, what = `answers ${status}`): void {
  if (ex.status !== status) throw new CheckFailure(what, `HTTP ${status}`, `HTTP ${ex.status}: ${show(ex.body)}`, ex);
}

/** The body has the endpoint's response shape; returns it parsed. */
function expectShape<N extends EndpointName>(ex: Exchange<N>): EndpointData<N> {
  const parsed = endpoints[ex.endpoint].response.safeParse(ex.body);
  if (!parsed.success) {
    throw new CheckFailure('the answer has the response shape of the endpoint', `the ${ex.endpoint} response shape`, describeIssues(parsed.error.issues, 'response'), ex);
  }
  return parsed.data as EndpointData<N>;
}

/** An error answer: this status and the error body `{ error: { message } }`. */
export function expectError(ex: Exchange, status: number, what = `answers ${status} with the error body`): void {
  expectStatus(ex, status, what);
  const parsed = errorBodySchema.safeParse(ex.body);
  if (!parsed.success) {
    throw new CheckFailure(`${what}: the error body is { error: { message } }`, '{ "error": { "message": "…" } }', show(ex.body), ex);
  }
}

/** Deep equality of JSON values. */
export function expectEqual(actual: unknown, expected: unknown, what: string, ex?: Exchange): void {
  if (!isDeepStrictEqual(actual, expected)) throw new CheckFailure(what, show(expected), show(actual), ex);
}

export function expectTrue(condition: boolean, what: string, expected: string, actual: unknown, ex?: Exchange): void {
  if (!condition) throw new CheckFailure(what, expected, typeof actual === 'string' ? actual : show(actual), ex);
}

/** A JSON value in one line, cut short. */
export function show(value: unknown): string {
  if (value === undefined) return '(nothing)';
  return excerpt(typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value));
}
