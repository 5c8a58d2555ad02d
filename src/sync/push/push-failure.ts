import { CLIENT_DEFAULTS } from '../../client/client-options.ts';
import { backoffDelay, heededRetryAfter, isNotSentCode, isRetryable, type AttemptFailure } from '../../client/retry-policy.ts';
import { InvalidResponseError, NetworkError, UpstreamError } from '../../errors.ts';

/**
 * What a failed push request means for the edits it carried. The client has already retried
 * what its retry policy allows; this decides what happens next, with the same rule
 * (`isRetryable` of src/client/retry-policy.ts) telling transient failures apart and telling
 * whether the upstream may have applied the request anyway.
 *
 * - `rejected`: 400/422/413: something in the batch is wrong; split it to find out what.
 * - `not-found`: 404: a record of the batch is gone upstream (or the table is).
 * - `transient`: network error, 429, 5xx: try again later. `maybeApplied` when the request may
 *   have gone through (a reset after sending, a 500, an unreadable 2xx answer); `unanswered`
 *   when no answer of upstream's came (a timeout, a connection reset or dropped after sending, a
 *   gateway's 502, 504 or other 5xx but 500 and 503), so that upstream may still be applying it (an answer of its own, even a
 *   500, means the request is over). `stopsPush`
 *   when every request would meet it too: upstream unreachable, timing out, failing or
 *   throttling once the client has retried what its policy allows (all but an unreadable 2xx
 *   answer, which is about that answer). The edits that met it are charged an attempt; the push
 *   sends nothing more this cycle, and fails with that error. A create that may have been
 *   applied is not repeated by the client, so its failure alone proves little: its read-back
 *   decides (table-push.ts).
 * - `fatal`: 401/403 and other statuses: every request would fail the same way; the push stops
 *   without charging the edits an attempt.
 */
export type PushFailure =
  | { kind: 'rejected'; message: string }
  | { kind: 'not-found'; message: string }
  | { kind: 'transient'; message: string; retryAfterMs: number | undefined; maybeApplied: boolean; unanswered?: true; stopsPush?: Error }
  | { kind: 'fatal'; error: unknown };

export function classifyPushFailure(error: unknown): PushFailure {
  if (error instanceof UpstreamError) {
    const message = error.upstreamMessage === '' ? error.message : error.upstreamMessage;
    const { status } = error;
    if (status === 400 || status === 422 || status === 413) return { kind: 'rejected', message };
    if (status === 404) return { kind: 'not-found', message };
    const attempt: AttemptFailure = { kind: 'status', status };
    if (isRetryable(attempt, 'always')) {
      const maybeApplied = !isRetryable(attempt, 'safe');
      // The API answers 500 of its own (docs/sync.md); any other 5xx that may have gone through
      // is a gateway's (502, 504, a CDN's 520-524): the upstream behind it may still be applying it.
      const gateway = status !== 500;
      return {
        kind: 'transient', message: error.message, retryAfterMs: error.retryAfterMs, maybeApplied,
        ...(maybeApplied && gateway ? { unanswered: true as const } : {}), stopsPush: error,
      };
    }
    return { kind: 'fatal', error };
  }
  if (error instanceof NetworkError) {
    const attempt: AttemptFailure = { kind: 'network', notSent: isNotSentCode(error.causeCode) };
    const maybeApplied = !isRetryable(attempt, 'safe');
    return { kind: 'transient', message: error.message, retryAfterMs: undefined, maybeApplied, ...(maybeApplied ? { unanswered: true as const } : {}), stopsPush: error };
  }
  if (error instanceof InvalidResponseError) {
    // The upstream answered 2xx: it did apply the request, but its answer cannot be used.
    return { kind: 'transient', message: error.message, retryAfterMs: undefined, maybeApplied: true };
  }
  return { kind: 'fatal', error };
}

/**
 * Whether an error of a request other than the push's (the schema pull's) says upstream cannot be
 * used now, so that a push would meet it too: unreachable, failing or throttling once retried,
 * refusing the key. Not an answer wsmirror refused, nor a failure of the mirror.
 */
export function upstreamUnusable(error: unknown): boolean {
  if (!(error instanceof UpstreamError) && !(error instanceof NetworkError)) return false;
  const failure = classifyPushFailure(error);
  return failure.kind === 'fatal' || (failure.kind === 'transient' && failure.stopsPush !== undefined);
}

/** Whether nothing more is sent after this failure: one every request would meet (`fatal`, `stopsPush`). */
export function endsPush(failure: PushFailure): boolean {
  return failure.kind === 'fatal' || (failure.kind === 'transient' && failure.stopsPush !== undefined);
}

export interface RetrySchedule {
  /** First delay ceiling; doubles with each attempt. */
  baseMs: number;
  maxMs: number;
}

/**
 * When an edit that failed `attempts` times (this failure included) is tried again: exponential
 * backoff with full jitter, never earlier than the upstream's Retry-After, as far as the client
 * heeds one (`heededRetryAfter`: two minutes at most).
 */
export function nextAttemptAt(
  now: number,
  attempts: number,
  retryAfterMs: number | undefined,
  schedule: RetrySchedule,
  random: () => number = Math.random,
): string {
  const heeded = retryAfterMs === undefined ? 0 : heededRetryAfter(retryAfterMs, CLIENT_DEFAULTS.retryAfterMaxMs).waitMs;
  const delay = Math.max(heeded, backoffDelay(attempts, schedule.baseMs, schedule.maxMs, random));
  return new Date(now + delay).toISOString();
}
