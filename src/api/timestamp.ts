import * as z from 'zod';

// YYYY-MM-DDTHH:MM[:SS[.fraction]]Z, as the spec's "Timestamp parameters" section fixes it: the
// fraction may have any number of digits. DATE_TIME_RE is the same with an offset ±HH:MM in
// place of Z allowed too (ISO 8601's extended format, as RFC 3339 profiles it).
const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?Z$/;
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Unix milliseconds of a UTC date and time; `month` is 1-12. */
function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, millis = 0): number {
  // Date.UTC reads years 0-99 as 1900-1999: those go the long way.
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime();
}

/**
 * Parses a spec timestamp into Unix milliseconds, or returns undefined when the text is not
 * one (wrong shape, missing `Z`, or an impossible calendar date or time of day).
 */
export function parseTimestamp(text: string): number | undefined {
  const m = TIMESTAMP_RE.exec(text);
  return m ? matchedMillis(m) : undefined;
}

/**
 * Parses an ISO 8601 date-time with `Z` or an offset `±HH:MM` (hours to 23, minutes to 59) into
 * the Unix milliseconds of the instant it names, or returns undefined when the text is not one or
 * that instant falls outside the years 0000 to 9999 in UTC (where no spec timestamp can write
 * it). A date-time without an offset names no instant, and is not one.
 */
export function parseDateTime(text: string): number | undefined {
  const m = DATE_TIME_RE.exec(text);
  const local = m ? matchedMillis(m) : undefined;
  if (local === undefined || m![8] === undefined) return local;
  const hours = Number(m![9]);
  const minutes = Number(m![10]);
  if (hours > 23 || minutes > 59) return undefined;
  // The local time is ahead of UTC by a positive offset: UTC is the local time minus it.
  const ms = local - (m![8] === '+' ? 1 : -1) * (hours * 60 + minutes) * 60_000;
  return ms < EARLIEST_TIMESTAMP_MS || ms > LATEST_TIMESTAMP_MS ? undefined : ms;
}

/** The milliseconds of the date and time of a TIMESTAMP_RE or DATE_TIME_RE match, read as UTC. */
function matchedMillis(m: RegExpExecArray): number | undefined {
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  // Fractions finer than a millisecond are truncated: the service keeps milliseconds.
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  return utcMillis(year, month, day, hour, minute, second, millis);
}

/**
 * The instants a timestamp or date can be written for: the years 0000 to 9999, as `YYYY` has four
 * digits. Unix milliseconds outside them (JavaScript dates reach ±275760) have no such form.
 */
export const EARLIEST_TIMESTAMP_MS = utcMillis(0, 1, 1);
export const LATEST_TIMESTAMP_MS = utcMillis(9999, 12, 31, 23, 59, 59, 999);

/** Formats Unix milliseconds the way the service writes timestamps: always with milliseconds. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

export const TIMESTAMP_FORMAT_MESSAGE = 'must be a UTC timestamp YYYY-MM-DDTHH:MM[:SS[.fraction]]Z with a valid calendar date';

export const timestampSchema = z
  .string()
  .refine((s) => parseTimestamp(s) !== undefined, { message: TIMESTAMP_FORMAT_MESSAGE })
  .meta({
    description: 'ISO 8601 UTC date-time: YYYY-MM-DDTHH:MM[:SS[.fraction]]Z (trailing Z required).',
    examples: ['2026-01-31T12:00:00.000Z'],
  });

/** Parses a calendar date `YYYY-MM-DD`, returning Unix milliseconds at midnight UTC. */
export function parseDate(text: string): number | undefined {
  if (!isCalendarDate(text)) return undefined;
  return utcMillis(digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2));
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const CANONICAL_TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The number written by `length` ASCII digits at `start` (the caller has matched them). */
function digits(text: string, start: number, length: number): number {
  let n = 0;
  for (let i = start; i < start + length; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

function validDay(text: string): boolean {
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/**
 * True for a valid calendar date `YYYY-MM-DD`. What `parseDate` accepts, without building a
 * Date: the mirror checks every date value of a pull with it.
 */
export function isCalendarDate(text: string): boolean {
  return DATE_RE.test(text) && validDay(text);
}

/**
 * True for a timestamp in the service's own form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, with a valid date
 * and time of day: the form every read returns, so `formatTimestamp(parseTimestamp(text))` is
 * `text` itself. Checked without building a Date: the mirror checks every timestamp of a pull.
 */
export function isCanonicalTimestamp(text: string): boolean {
  return CANONICAL_TIMESTAMP_RE.test(text) && validDay(text)
    && digits(text, 11, 2) <= 23 && digits(text, 14, 2) <= 59 && digits(text, 17, 2) <= 59;
}
