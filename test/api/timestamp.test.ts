import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EARLIEST_TIMESTAMP_MS, LATEST_TIMESTAMP_MS, formatTimestamp, isCalendarDate, isCanonicalTimestamp, parseDate, parseDateTime,
  parseTimestamp, timestampSchema,
} from '../../src/api/timestamp.ts';

const iso = (text: string) => new Date(text).getTime();

describe('parseTimestamp', () => {
  it('reads years 0 to 99 as written, not as 1900 to 1999', () => {
    expect(parseTimestamp('0001-01-01T00:00Z')).toBe(iso('0001-01-01T00:00:00.000Z'));
    expect(parseTimestamp('0005-01-01T00:00Z')).toBe(iso('0005-01-01T00:00:00.000Z'));
    expect(parseTimestamp('0099-12-31T23:59:59.999Z')).toBe(iso('0099-12-31T23:59:59.999Z'));
    expect(formatTimestamp(parseTimestamp('0001-01-01T00:00Z')!)).toBe('0001-01-01T00:00:00.000Z');
    expect(formatTimestamp(parseTimestamp('0099-06-15T08:30:05.5Z')!)).toBe('0099-06-15T08:30:05.500Z');
    expect(formatTimestamp(parseTimestamp('0000-01-01T00:00Z')!)).toBe('0000-01-01T00:00:00.000Z');
  });

  it('knows leap years: every 4th, not every 100th, every 400th', () => {
    expect(parseTimestamp('2024-02-29T00:00Z')).toBe(iso('2024-02-29T00:00:00Z'));
    expect(parseTimestamp('2000-02-29T00:00Z')).toBe(iso('2000-02-29T00:00:00Z'));
    expect(parseTimestamp('0004-02-29T00:00Z')).toBe(iso('0004-02-29T00:00:00Z'));
    expect(parseTimestamp('2023-02-29T00:00Z')).toBeUndefined();
    expect(parseTimestamp('1900-02-29T00:00Z')).toBeUndefined();
    expect(parseTimestamp('0100-02-29T00:00Z')).toBeUndefined();
    expect(parseTimestamp('2026-04-31T00:00Z')).toBeUndefined();
    expect(parseTimestamp('2026-12-31T00:00Z')).toBe(iso('2026-12-31T00:00:00Z'));
  });

  it('requires the trailing Z', () => {
    expect(parseTimestamp('2026-01-31T12:00:00')).toBeUndefined();
    expect(parseTimestamp('2026-01-31T12:00')).toBeUndefined();
    expect(parseTimestamp('2026-01-31T12:00:00+00:00')).toBeUndefined();
    expect(parseTimestamp('2026-01-31T12:00:00z')).toBeUndefined();
  });

  it('accepts HH:MM without seconds', () => {
    expect(parseTimestamp('2026-01-31T12:00Z')).toBe(iso('2026-01-31T12:00:00.000Z'));
    expect(parseTimestamp('2026-01-31T12:00:07Z')).toBe(iso('2026-01-31T12:00:07.000Z'));
  });

  it('takes fractions of any length, truncating those finer than a millisecond', () => {
    expect(parseTimestamp('2026-01-31T12:00:00.5Z')).toBe(iso('2026-01-31T12:00:00.500Z'));
    expect(parseTimestamp('2026-01-31T12:00:00.123456789Z')).toBe(iso('2026-01-31T12:00:00.123Z'));
    expect(parseTimestamp('2026-01-31T23:59:59.9999Z')).toBe(iso('2026-01-31T23:59:59.999Z'));
    expect(parseTimestamp('2026-01-31T12:00:00.1234567891Z')).toBe(iso('2026-01-31T12:00:00.123Z'));
    expect(parseTimestamp(`2026-01-31T12:00:00.${'9'.repeat(40)}Z`)).toBe(iso('2026-01-31T12:00:00.999Z'));
    expect(parseTimestamp('2026-01-31T12:00.5Z')).toBeUndefined();
  });

  it('refuses impossible times of day and other shapes', () => {
    for (const text of ['2026-01-31T24:00Z', '2026-01-31T23:60Z', '2026-01-31T23:59:60Z', '2026-00-10T00:00Z', '2026-13-10T00:00Z', '2026-01-00T00:00Z', '26-01-31T00:00Z', '2026-01-31 12:00Z', '']) {
      expect(parseTimestamp(text), text).toBeUndefined();
    }
  });

  it('is what timestampSchema accepts', () => {
    expect(timestampSchema.safeParse('0005-01-01T00:00Z').success).toBe(true);
    expect(timestampSchema.safeParse('1900-02-29T00:00Z').success).toBe(false);
  });
});

describe('parseDateTime', () => {
  it('reads Z as parseTimestamp does, and an offset as the instant it names', () => {
    expect(parseDateTime('2026-01-31T12:00Z')).toBe(parseTimestamp('2026-01-31T12:00Z'));
    expect(parseDateTime('2024-02-29T01:30:00+02:00')).toBe(iso('2024-02-28T23:30:00Z'));
    expect(parseDateTime('2023-12-31T23:00:00.25-05:00')).toBe(iso('2024-01-01T04:00:00.250Z'));
    expect(parseDateTime('2024-03-01T00:00-00:00')).toBe(iso('2024-03-01T00:00:00Z'));
    expect(parseDateTime('0005-01-01T00:00+00:00')).toBe(iso('0005-01-01T00:00:00.000Z'));
  });

  it('agrees with Date.parse for any offset of RFC 3339 and keeps to the years 0000 to 9999 in UTC', () => {
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    const text = fc.tuple(
      fc.integer({ min: EARLIEST_TIMESTAMP_MS, max: LATEST_TIMESTAMP_MS }), fc.constantFrom('+', '-'),
      fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }),
    ).map(([ms, sign, h, m]) => `${formatTimestamp(ms).slice(0, 23)}${sign}${pad(h)}:${pad(m)}`);
    fc.assert(fc.property(text, (t) => {
      const expected = Date.parse(t);
      const inRange = expected >= EARLIEST_TIMESTAMP_MS && expected <= LATEST_TIMESTAMP_MS;
      expect(parseDateTime(t), t).toBe(inRange ? expected : undefined);
    }), { numRuns: 3000 });
  });

  it('refuses a date-time without an offset, impossible offsets and other forms of one', () => {
    for (const text of [
      '2026-01-31T12:00:00', '2026-01-31T12:00:00+24:00', '2026-01-31T12:00:00+02:60', '2026-01-31T12:00:00+0200',
      '2026-01-31T12:00:00+02', '2026-01-31T12:00:00 +02:00', '2026-02-30T12:00:00+02:00', '2026-01-31',
    ]) {
      expect(parseDateTime(text), text).toBeUndefined();
    }
  });
});

describe('parseDate', () => {
  it('reads years 0 to 99 as written and checks the calendar', () => {
    expect(parseDate('0001-01-01')).toBe(iso('0001-01-01T00:00:00Z'));
    expect(parseDate('0099-12-31')).toBe(iso('0099-12-31T00:00:00Z'));
    expect(formatTimestamp(parseDate('0050-07-04')!).slice(0, 10)).toBe('0050-07-04');
    expect(parseDate('2000-02-29')).toBe(iso('2000-02-29T00:00:00Z'));
    expect(parseDate('1900-02-29')).toBeUndefined();
    expect(parseDate('2026-02-30')).toBeUndefined();
    expect(parseDate('2026-1-01')).toBeUndefined();
  });
});

describe('isCanonicalTimestamp and isCalendarDate', () => {
  // Digits anywhere, including impossible months, days and times of day.
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  const canonicalShape = fc.tuple(
    fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }),
    fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 999 }),
  ).map(([y, mo, d, h, mi, s, ms]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`);

  it('accept exactly the canonical timestamps parseTimestamp accepts and formats back to themselves', () => {
    fc.assert(fc.property(fc.oneof(canonicalShape, fc.string()), (text) => {
      const ms = parseTimestamp(text);
      expect(isCanonicalTimestamp(text)).toBe(ms !== undefined && formatTimestamp(ms) === text);
    }), { numRuns: 5000 });
    expect(isCanonicalTimestamp('2024-02-29T23:59:59.999Z')).toBe(true);
    expect(isCanonicalTimestamp('2023-02-29T00:00:00.000Z')).toBe(false);
    expect(isCanonicalTimestamp('2026-01-31T24:00:00.000Z')).toBe(false);
    expect(isCanonicalTimestamp('2026-01-31T12:00:00Z')).toBe(false);
  });

  it('accept exactly the dates parseDate accepts', () => {
    fc.assert(fc.property(fc.oneof(canonicalShape.map((t) => t.slice(0, 10)), fc.string()), (text) => {
      expect(isCalendarDate(text)).toBe(parseDate(text) !== undefined);
    }), { numRuns: 5000 });
    expect(isCalendarDate('0100-02-29')).toBe(false);
    expect(isCalendarDate('2000-02-29')).toBe(true);
  });
});
