import type { HttpMethod } from '../api/endpoints.ts';

/**
 * When a failed request is sent again.
 *
 * - `always`: every transient failure is retried — network errors (refused, reset, dropped,
 *   timed out), 429 and 5xx.
 * - `safe`: only failures where the upstream provably did not process the request: the
 *   connection was never made (refused, DNS, connect timeout), or the upstream answered 429 or
 *   503 (it turned the request away). A reset, a dropped connection or a timeout after the
 *   request went out, and 500/502/504, leave the outcome unknown and are not retried.
 * - `never`: one attempt.
 *
 * Default: GET, PATCH and DELETE use `always`; POST uses `safe`. GETs are read-only; PATCH sets
 * values, so repeating it converges; a repeated DELETE (or rename) whose first attempt went through
 * answers 404, which the caller can tell apart by `UpstreamError.attempts > 1`. A POST create
 * repeated after a dropped connection may create the records twice, so creates are only repeated
 * when nothing can have happened; the push step reconciles the rest.
 */
export type RetryMode = 'safe' | 'always' | 'never';

export function defaultRetryMode(method: HttpMethod): RetryMode {
  return method === 'POST' ? 'safe' : 'always';
}

/** How one attempt failed, as far as retrying is concerned. */
export type AttemptFailure =
  | { kind: 'status'; status: number }
  | { kind: 'network'; notSent: boolean }
  | { kind: 'final' };

export function isRetryable(failure: AttemptFailure, mode: RetryMode): boolean {
  if (mode === 'never' || failure.kind === 'final') return false;
  if (failure.kind === 'network') return mode === 'always' || failure.notSent;
  const { status } = failure;
  if (status === 429 || status === 503) return true;
  return mode === 'always' && status >= 500 && status <= 599;
}

// Errors raised before a connection exists: the request bytes never left this process.
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The error code of a network error, looking into the AggregateError of a multi-address connect. */
export function networkErrorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (err instanceof AggregateError) {
      for (const inner of err.errors) {
        const innerCode = networkErrorCode(inner);
        if (innerCode !== 'UNKNOWN') return innerCode;
      }
    }
  }
  return 'UNKNOWN';
}

export function isNotSentCode(code: string): boolean {
  return NOT_SENT_CODES.has(code);
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^(retry-1))]. */
export function backoffDelay(retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * How long wsmirror heeds a `Retry-After` of `retryAfterMs`: `maxMs` at most (the client's
 * `retryAfterMaxMs`, CLIENT_DEFAULTS). A request does not wait out a longer one (`beyond`: the call
 * fails, the delay attached); a push puts its edits off by `waitMs`, never further: an upstream
 * asking for years (or for more than a date can hold) does not park them for ever.
 */
export function heededRetryAfter(retryAfterMs: number, maxMs: number): { waitMs: number; beyond: boolean } {
  return { waitMs: Math.min(retryAfterMs, maxMs), beyond: retryAfterMs > maxMs };
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date; undefined if absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  // HTTP dates always name a weekday and a time zone: do not mistake a bare number for one.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
