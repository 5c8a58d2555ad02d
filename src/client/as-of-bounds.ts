import { formatTimestamp, parseTimestamp } from '../api/timestamp.ts';
import { InvalidResponseError, type UpstreamCall } from '../errors.ts';

/**
 * How far an upstream `meta.asOf` may run ahead of this machine's clock. Two clocks kept by NTP
 * differ by far less; a larger lead is a broken upstream clock (or answer), and taking it as the
 * next `since` would skip every change made until that time. The other way round needs no
 * allowance here: a clock behind ours only makes `asOf` earlier, which the lookback covers.
 */
export const MAX_AS_OF_LEAD_MS = 5 * 60_000;

/**
 * Refuses a changes answer whose `meta.asOf` cannot be a cursor: earlier than the `since` it
 * answers (a window that ends before it starts), or later than this machine's clock plus
 * `MAX_AS_OF_LEAD_MS`. Every changes answer passes here, first pages and probes alike.
 */
export function checkAsOf(call: UpstreamCall, since: string, asOf: string, now: number = Date.now()): void {
  const asOfMs = parseTimestamp(asOf);
  if (asOfMs === undefined) throw new InvalidResponseError(call, 'schema', `meta.asOf ${JSON.stringify(asOf)} is not a timestamp`);
  const sinceMs = parseTimestamp(since);
  if (sinceMs !== undefined && asOfMs < sinceMs) {
    throw new InvalidResponseError(call, 'clock', `meta.asOf ${asOf} is earlier than the since sent (${since})`);
  }
  const bound = now + MAX_AS_OF_LEAD_MS;
  if (asOfMs > bound) {
    throw new InvalidResponseError(call, 'clock',
      `meta.asOf ${asOf} is later than ${formatTimestamp(bound)} (this machine's clock plus ` +
      `${MAX_AS_OF_LEAD_MS / 60_000} minutes of allowed clock skew); check the upstream's clock and this machine's`);
  }
}

/**
 * How far a feed's `meta.asOf` may run ahead of its last one beyond the time that passed here
 * meanwhile (request times, an NTP correction).
 */
export const MAX_AS_OF_JUMP_MS = 60_000;

/**
 * The last `meta.asOf` of each changes feed (schema, and each table's records) this client took,
 * with when it arrived by this process's monotonic clock. Within `checkAsOf`'s bound of five
 * minutes, one answer whose `asOf` jumped ahead would still move the cursor past changes made
 * meanwhile; against the feed's own last answer the bound is the time that passed, plus
 * `MAX_AS_OF_JUMP_MS`. A client that has not polled a feed yet (a new process) has only
 * `checkAsOf`'s bound for it.
 */
export class AsOfProgress {
  readonly #last = new Map<string, { asOfMs: number; at: number }>();

  check(call: UpstreamCall, since: string, asOf: string, now: number = Date.now(), monotonic: number = performance.now()): void {
    checkAsOf(call, since, asOf, now);
    const asOfMs = parseTimestamp(asOf)!;
    const last = this.#last.get(call.path);
    if (last !== undefined) {
      const passed = monotonic - last.at;
      if (asOfMs > last.asOfMs + passed + MAX_AS_OF_JUMP_MS) {
        throw new InvalidResponseError(call, 'clock',
          `meta.asOf ${asOf} is ${Math.round((asOfMs - last.asOfMs) / 1000)} s after this feed's last (${formatTimestamp(last.asOfMs)}), ` +
          `but ${Math.round(passed / 1000)} s passed here: upstream's clock, or this answer, jumped ahead; the cursor stays`);
      }
    }
    if (last === undefined || asOfMs >= last.asOfMs) this.#last.set(call.path, { asOfMs, at: monotonic });
  }
}
