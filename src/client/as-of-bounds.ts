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
