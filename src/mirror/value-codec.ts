import { appointmentBoundsText, formatAppointment } from '../api/appointment.ts';
import type { FieldType } from '../api/field-types.ts';
import { formatTimestamp, isCalendarDate, isCanonicalTimestamp, parseTimestamp } from '../api/timestamp.ts';
import { MirrorValueError } from './errors.ts';
import { parseSqlTimestamp, withoutBc } from './sql-timestamp.ts';
import { isUnstorable, storableJson, storableText } from './storable-text.ts';
import type { DialectName } from './dialect.ts';
import type { SqlValue } from './dialect-driver.ts';
import { DIALECTS } from './dialects.ts';
import type { ValueKind } from './value-kind.ts';
import { valueKindOf } from './value-kind.ts';

/**
 * Conversion between API values (spec, "Value shapes by field type") and SQL values, one function
 * per direction. `apiToSql` is used by the pull, `sqlToApi` by readers and the push.
 *
 * SQL values (`SqlValue`) are what the drivers bind and return. The Postgres connection of the
 * mirror returns `date` as `YYYY-MM-DD` text, `bigint` as a number, `jsonb` parsed,
 * `timestamptz` as a Date and `tstzrange` as its text (`["2026-01-31 09:00:00+00",…)`); other
 * clients may differ, so decoding is tolerant.
 */

const MAX_RECORD_ID = Number.MAX_SAFE_INTEGER;

function fail(type: FieldType | string, value: unknown, expected: string): never {
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value) : describe(value);
  throw new MirrorValueError(`a ${type} value must be ${expected}, got ${shown}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

// ---- API → SQL ---------------------------------------------------------------------------------

/** Set by `apiToSql` when text had to change to be stored (see storable-text.ts). */
export interface EncodeNotes {
  replacedText: boolean;
}

/**
 * Converts an API value of a field of `type` to the SQL value stored in its column. Text holding
 * NUL or unpaired surrogates is stored with U+FFFD in their place; `notes.replacedText` says so.
 */
export function apiToSql(type: FieldType | string, value: unknown, dialect: DialectName, notes?: EncodeNotes): SqlValue {
  return sqlEncoder(type, dialect)(value, notes);
}

/** `apiToSql` for one field type and dialect, chosen once: the pull encodes every value with one. */
export type SqlEncoder = (value: unknown, notes?: EncodeNotes) => SqlValue;

type KindEncoder = (value: NonNullable<unknown>, type: string, dialect: DialectName, notes: EncodeNotes | undefined) => SqlValue;

const encoders = new Map<string, SqlEncoder>();

export function sqlEncoder(type: FieldType | string, dialect: DialectName): SqlEncoder {
  const key = `${dialect}:${type}`;
  let encoder = encoders.get(key);
  if (!encoder) {
    const encode = ENCODE_KIND[valueKindOf(type)];
    encoder = (value, notes) => (value === null || value === undefined ? null : encode(value, type, dialect, notes));
    encoders.set(key, encoder);
  }
  return encoder;
}

// JSON.stringify escapes NUL as \u0000 and a lone surrogate as \udXXX: a cheap test for both.
const ESCAPED_UNSTORABLE = /\\u(?:0000|d[89a-f])/i;
const NUMERIC_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

const ENCODE_KIND: Readonly<Record<ValueKind, KindEncoder>> = {
  number(value, type) {
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    // Update bodies accept numeric strings (spec); reads return numbers.
    if (typeof value === 'string' && NUMERIC_TEXT.test(value)) {
      const n = Number(value);
      if (Number.isFinite(n)) return n;
    }
    return fail(type, value, 'a finite number');
  },
  boolean(value, type, dialect) {
    if (typeof value !== 'boolean') return fail(type, value, 'true or false');
    return DIALECTS[dialect].booleanToSql(value);
  },
  date(value, type, dialect) {
    const calendar = DIALECTS[dialect].calendarToSql;
    if (typeof value === 'string') {
      if (isCalendarDate(value)) return calendar(value);
      const ms = parseTimestamp(value);
      if (ms !== undefined) return calendar(formatTimestamp(ms).slice(0, 10));
    } else if (isUnixMillis(value)) {
      return calendar(formatTimestamp(value).slice(0, 10));
    }
    return fail(type, value, 'a date YYYY-MM-DD');
  },
  timestamp(value, type, dialect) {
    const calendar = DIALECTS[dialect].calendarToSql;
    // Reads return the service's own form: checked and kept as is, no trip through Date.
    if (typeof value === 'string' && isCanonicalTimestamp(value)) return calendar(value);
    const ms = typeof value === 'string' ? parseTimestamp(value) : isUnixMillis(value) ? value : undefined;
    if (ms === undefined) return fail(type, value, 'an ISO 8601 UTC timestamp');
    return calendar(formatTimestamp(ms));
  },
  range(value, type, dialect) {
    const bounds = typeof value === 'string' ? appointmentBoundsText(value) : undefined;
    if (bounds === undefined) return fail(type, value, 'an appointment [<start>,<end>) of UTC timestamps, start not after end');
    return DIALECTS[dialect].appointments.toSql(bounds.start, bounds.end);
  },
  reference(value, type) {
    const id = toRecordId(value);
    if (id === undefined) return fail(type, value, 'a positive integer record id');
    return id;
  },
  json(value, _type, _dialect, notes) {
    const text = JSON.stringify(value);
    if (!ESCAPED_UNSTORABLE.test(text)) return text;
    const fixed = storableJson(value);
    if (fixed === value) return text;
    if (notes) notes.replacedText = true;
    return JSON.stringify(fixed);
  },
  text(value, _type, _dialect, notes) {
    if (typeof value === 'string') {
      if (!isUnstorable(value)) return value;
      if (notes) notes.replacedText = true;
      return storableText(value);
    }
    // A surprising shape is kept readable rather than failing the whole page.
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return JSON.stringify(value);
  },
};

function isUnixMillis(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 8.64e15;
}

/** A record id as a number: a positive safe integer, given as a number, bigint or digit string. */
export function toRecordId(value: unknown): number | undefined {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'bigint') n = Number(value);
  else if (typeof value === 'string' && /^[0-9]{1,16}$/.test(value)) n = Number(value);
  else return undefined;
  return Number.isInteger(n) && n > 0 && n <= MAX_RECORD_ID ? n : undefined;
}

// ---- SQL → API ---------------------------------------------------------------------------------

/** Converts a stored SQL value of a field of `type` back to its API value. */
export function sqlToApi(type: FieldType | string, value: unknown, dialect: DialectName): unknown {
  if (value === null || value === undefined) return null;
  const kind = valueKindOf(type);
  switch (kind) {
    case 'number': {
      // Text only as a decimal number: Number() would read ' ' as 0 and '0x1F' as 31 (SQLite
      // keeps such text as typed in a number column).
      const n = typeof value === 'bigint' ? Number(value) : typeof value === 'string' ? (NUMERIC_TEXT.test(value) ? Number(value) : Number.NaN) : value;
      if (typeof n === 'number' && Number.isFinite(n)) return n;
      return fail(type, value, 'a finite number');
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 1 || value === 0 || value === 1n || value === 0n) return Number(value) === 1;
      // SQLite keeps the text 'true' someone typed for its keyword true.
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      return fail(type, value, 'a boolean (true/false, or 0/1)');
    case 'date': {
      if (value instanceof Date && !Number.isNaN(value.getTime())) {
        // node-postgres' default parser builds a local-midnight Date for `date`.
        const y = String(value.getFullYear()).padStart(4, '0');
        return `${y}-${String(value.getMonth() + 1).padStart(2, '0')}-${String(value.getDate()).padStart(2, '0')}`;
      }
      if (typeof value === 'string') {
        const ad = withoutBc(value);
        if (ad !== undefined && isCalendarDate(ad)) return ad;
      }
      return fail(type, value, 'a date YYYY-MM-DD');
    }
    case 'timestamp': {
      if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
      if (typeof value === 'string' && isCanonicalTimestamp(value)) return value;
      if (typeof value === 'string') {
        const ms = parseTimestamp(value) ?? parseSqlTimestamp(value);
        if (ms !== undefined) return formatTimestamp(ms);
      }
      if (isUnixMillis(value)) return formatTimestamp(value);
      return fail(type, value, 'an ISO 8601 UTC timestamp');
    }
    case 'range': {
      const bounds = DIALECTS[dialect].appointments.fromSql(value);
      if (bounds === undefined) return fail(type, value, 'an appointment with two finite bounds');
      // An empty range holds no appointment.
      return bounds === null ? null : formatAppointment(bounds);
    }
    case 'reference': {
      const id = toRecordId(value);
      if (id === undefined) return fail(type, value, 'a positive integer record id');
      return id;
    }
    case 'json':
      if (DIALECTS[dialect].jsonArrivesParsed) return value;
      if (typeof value !== 'string') return fail(type, value, 'JSON text');
      try {
        return JSON.parse(value) as unknown;
      } catch {
        return fail(type, value, 'JSON text');
      }
    case 'text':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'bigint') return String(value);
      return fail(type, value, 'text');
  }
}
