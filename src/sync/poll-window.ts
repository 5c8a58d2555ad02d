import { formatTimestamp, parseTimestamp } from '../api/timestamp.ts';

/** `since` of a first poll: the beginning of time, so the answer's `asOf` is the server's now. */
export const BEGINNING = '1970-01-01T00:00:00.000Z';

/** The next poll's `since`: this poll's `asOf` minus the lookback (DESIGN §4.3). */
export function nextSince(asOf: string, lookbackMs: number): string {
  const ms = parseTimestamp(asOf);
  if (ms === undefined) throw new Error(`upstream asOf ${JSON.stringify(asOf)} is not a timestamp`);
  return formatTimestamp(Math.max(0, ms - lookbackMs));
}
