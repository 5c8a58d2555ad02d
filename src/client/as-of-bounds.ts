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

/** A feed's `meta.asOf` and when it arrived, by this process's monotonic clock. */
interface AsOfSeen {
  asOfMs: number;
  at: number;
}

/** Whether `asOfMs`, arriving at `at`, runs ahead of `earlier` by no more than the time passed plus `MAX_AS_OF_JUMP_MS`. */
function keepsPace(earlier: AsOfSeen, asOfMs: number, at: number): boolean {
  return asOfMs <= earlier.asOfMs + (at - earlier.at) + MAX_AS_OF_JUMP_MS;
}

/**
 * The last `meta.asOf` of each changes feed (schema, and each table's records: keyed by the
 * feed's path, which names the module and table) this client took, with when it arrived by this
 * process's monotonic clock. Within `checkAsOf`'s bound of five minutes, one answer whose `asOf`
 * jumped ahead would still move the cursor past changes made meanwhile; against the feed's own
 * last answer the bound is the time that passed, plus `MAX_AS_OF_JUMP_MS`. A client that has not
 * polled a feed yet (a new process) has only `checkAsOf`'s bound for it.
 *
 * An upstream clock that really stepped forward (NTP correcting a clock that was behind) answers
 * on its new time from then on. So a refused jump is kept as the feed's candidate, and a later
 * answer that keeps pace with the candidate rather than with the last taken answer confirms the
 * step: it is taken and becomes the feed's last. The refused answer itself moves no cursor: one
 * answer cannot tell a step from a stray, and the confirming poll reads from the cursor that
 * stayed, so a real step loses no change by the wait. An answer taken meanwhile on the old clock
 * drops the candidate.
 */
export class AsOfProgress {
  readonly #last = new Map<string, AsOfSeen>();
  readonly #candidate = new Map<string, AsOfSeen>();

  check(call: UpstreamCall, since: string, asOf: string, now: number = Date.now(), monotonic: number = performance.now()): void {
    checkAsOf(call, since, asOf, now);
    const asOfMs = parseTimestamp(asOf)!;
    const last = this.#last.get(call.path);
    if (last !== undefined && !keepsPace(last, asOfMs, monotonic) && !this.#confirmsStep(call.path, asOfMs, monotonic)) {
      this.#candidate.set(call.path, { asOfMs, at: monotonic });
      throw new InvalidResponseError(call, 'clock',
        `meta.asOf ${asOf} is ${Math.round((asOfMs - last.asOfMs) / 1000)} s after this feed's last (${formatTimestamp(last.asOfMs)}), ` +
        `but ${Math.round((monotonic - last.at) / 1000)} s passed here: upstream's clock, or this answer, jumped ahead; ` +
        'the cursor stays until a later answer continues the new clock');
    }
    this.#candidate.delete(call.path);
    if (last === undefined || asOfMs >= last.asOfMs) this.#last.set(call.path, { asOfMs, at: monotonic });
  }

  /**
   * Whether `asOfMs` continues the feed's refused candidate. Strictly later, and with time passed
   * here: the same answer replayed (a proxy or cache repeating one bad answer) is not a second
   * witness of a clock that runs, nor are two answers that arrive at one instant. A clock that
   * stepped answers the next poll later on both counts.
   */
  #confirmsStep(path: string, asOfMs: number, monotonic: number): boolean {
    const candidate = this.#candidate.get(path);
    return candidate !== undefined && asOfMs > candidate.asOfMs && monotonic > candidate.at && keepsPace(candidate, asOfMs, monotonic);
  }
}
