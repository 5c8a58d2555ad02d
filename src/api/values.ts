import * as z from 'zod';
import { formatAppointment, parseAppointment } from './appointment.ts';
import type { FieldType } from './field-types.ts';
import { isReadOnlyType } from './field-types.ts';
import { EARLIEST_TIMESTAMP_MS, LATEST_TIMESTAMP_MS, formatTimestamp, parseDate, parseDateTime, parseTimestamp } from './timestamp.ts';

/**
 * Value shapes by field type (spec, "Value shapes by field type"), for record create and update
 * bodies. Each schema's output is the canonical form the service stores and returns: dates as
 * `YYYY-MM-DD`, timestamps as ISO 8601 UTC with milliseconds, appointments as `[start,end)`.
 */
export type ValueMode = 'create' | 'update';

const HH_MM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
const HH_MM_SS = /^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$/;
const HH_MM_RANGE = /^(([01][0-9]|2[0-3]):[0-5][0-9])-(([01][0-9]|2[0-3]):[0-5][0-9])$/;

const OUT_OF_RANGE = `Unix milliseconds must be ${EARLIEST_TIMESTAMP_MS} to ${LATEST_TIMESTAMP_MS} (the years 0000 to 9999)`;
const unixMillis = z
  .number()
  .int('Unix timestamps are whole milliseconds')
  .min(EARLIEST_TIMESTAMP_MS, OUT_OF_RANGE)
  .max(LATEST_TIMESTAMP_MS, OUT_OF_RANGE);

const isoTimestamp = z.string({ error: 'expected an ISO 8601 UTC timestamp string' }).transform((s, ctx) => {
  const ms = parseTimestamp(s);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 UTC timestamp such as 2026-01-31T12:00:00Z' });
    return z.NEVER;
  }
  return ms;
});

const timestampMillis = (mode: ValueMode) =>
  mode === 'create' ? isoTimestamp : z.union([isoTimestamp, unixMillis]);

const APPOINTMENT_RANGE = 'an appointment [<start>,<end>) of UTC timestamps, start not after end';
const CALENDAR_DATE = 'a calendar date YYYY-MM-DD';
/**
 * Date and appointment updates take "an ISO 8601 string or Unix timestamp in milliseconds", where
 * only timestamps say UTC: `Z` or an offset `±HH:MM` (parseDateTime). A date-time without one
 * names no instant.
 */
const DATE_TIME = 'an ISO 8601 date-time with Z or an offset ±HH:MM (2026-01-31T12:00:00+02:00) in the years 0000 to 9999 in UTC';

/** An appointment starting and ending at one instant: the empty range `[t,t)`. */
const atInstant = (ms: number) => formatAppointment({ start: ms, end: ms });
/** An instant's date in UTC, as Unix milliseconds have no other: one instant, one date. */
const utcDate = (ms: number) => formatTimestamp(ms).slice(0, 10);

const appointmentRange = z.string().transform((s, ctx) => {
  const bounds = parseAppointment(s);
  if (bounds === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected ${APPOINTMENT_RANGE}` });
    return z.NEVER;
  }
  return formatAppointment(bounds);
});

// Every string shape of an update in one branch, so a refused string is told each shape it may
// take; Unix milliseconds first, so a number that is none is told why (describeIssues).
const appointmentUpdate = z.union([
  unixMillis.transform(atInstant),
  z.string().transform((s, ctx) => {
    const bounds = parseAppointment(s);
    if (bounds !== undefined) return formatAppointment(bounds);
    const ms = parseDateTime(s);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `expected ${APPOINTMENT_RANGE}, or one instant: ${DATE_TIME}` });
      return z.NEVER;
    }
    return atInstant(ms);
  }),
]);

const dateString = z.string().transform((s, ctx) => {
  if (parseDate(s) === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected ${CALENDAR_DATE}` });
    return z.NEVER;
  }
  return s;
});

const dateUpdate = z.union([
  unixMillis.transform(utcDate),
  z.string().transform((s, ctx) => {
    if (parseDate(s) !== undefined) return s;
    const ms = parseDateTime(s);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `expected ${CALENDAR_DATE}, or ${DATE_TIME}` });
      return z.NEVER;
    }
    return utcDate(ms);
  }),
]);

const numericString = z
  .string()
  .regex(/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/, 'expected a number or a numeric string')
  .transform(Number)
  .pipe(z.number().finite());

/**
 * `{ icon, color, filling }` sent as a JSON-encoded string (icon update shape). Canonical output:
 * the bare icon name when only `icon` is given (the create shape), otherwise the object
 * re-encoded with keys in the order icon, color, filling.
 */
const iconObjectSchema = z.strictObject({
  icon: z.string().min(1),
  color: z.string().regex(/^#[0-9a-fA-F]{6}$/).optional(),
  filling: z.number().finite().optional(),
});

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

function canonicalIcon(parsed: unknown, ctx: z.RefinementCtx): string {
  const result = iconObjectSchema.safeParse(parsed);
  if (!result.success) {
    ctx.addIssue({ code: 'custom', message: 'expected a JSON-encoded object {"icon","color","filling"} (color #rrggbb, filling a number)' });
    return z.NEVER;
  }
  const { icon, color, filling } = result.data;
  if (color === undefined && filling === undefined) return icon;
  return JSON.stringify({ icon, ...(color === undefined ? {} : { color }), ...(filling === undefined ? {} : { filling }) });
}

const iconJsonString = z.string().transform((s, ctx) => canonicalIcon(parseJson(s), ctx));

/** Text JSON.parse reads as an object: only such text can be one (JSON's own whitespace first). */
const JSON_OBJECT_START = /^[ \t\n\r]*\{/;

/**
 * An icon name (icon create shape). Reads return the JSON of an icon object for an icon with a
 * color or filling, so text that is a JSON object is taken as that object, as on update: the
 * same text is stored the same way whichever request sent it, and a read is never ambiguous.
 */
const iconName = z.string().min(1, 'expected an icon name').transform((s, ctx) => {
  if (!JSON_OBJECT_START.test(s)) return s;
  const parsed = parseJson(s);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? canonicalIcon(parsed, ctx) : s;
});

/** A computed field takes no value; `null` (recordValueSchema) is the one thing it takes. */
const readOnly = (type: FieldType) =>
  z.any().superRefine((_v, ctx) => {
    ctx.addIssue({ code: 'custom', message: `fields of type ${type} are computed and cannot be written (null is accepted and changes nothing)` });
  });

const dynamicRecordId = z.union([z.string().regex(/^[0-9]+$/), z.number().int().positive()]).transform(String);

/** Types whose values are any string, stored as sent. */
const PLAIN_TEXT_TYPES: ReadonlySet<FieldType> = new Set(['string', 'html', 'react', 'styled', 'file', 'user']);

function baseSchema(type: FieldType, mode: ValueMode): z.ZodType {
  if (isReadOnlyType(type)) return readOnly(type);
  if (PLAIN_TEXT_TYPES.has(type)) return z.string({ error: 'expected a string' });
  switch (type) {
    case 'any':
    case 'unknown':
      return z.json();
    case 'appointment':
      return mode === 'create' ? appointmentRange : appointmentUpdate;
    case 'boolean':
      return z.boolean({ error: 'expected true or false' });
    case 'choice':
      return mode === 'create'
        ? z.string({ error: 'expected an option id (or name) string' }).min(1)
        : z
            .union([z.string().min(1), z.array(z.string().min(1))], {
              error: 'expected an option id (or name) string, or an array of at most one',
            })
            .transform((v, ctx) => {
              if (typeof v === 'string') return v;
              if (v.length > 1) {
                ctx.addIssue({ code: 'custom', message: `a choice field holds one option: send an array of at most one, not ${v.length}` });
                return z.NEVER;
              }
              return v[0] ?? null;
            });
    case 'multi':
      return z.array(z.string().min(1), { error: 'expected an array of option ids' });
    case 'dchoice':
      return dynamicRecordId;
    case 'dmulti':
      return z.array(dynamicRecordId);
    case 'color':
      return z.string().regex(/^#[0-9a-fA-F]{6}$/, 'expected a hex color #rrggbb');
    case 'date':
      return mode === 'create' ? dateString : dateUpdate;
    case 'timestamp':
      return timestampMillis(mode).transform(formatTimestamp);
    case 'time':
      return z.string().regex(HH_MM, 'expected a time HH:MM');
    case 'timeinterval':
      return mode === 'create'
        ? z.string().regex(HH_MM_RANGE, 'expected an interval HH:MM-HH:MM')
        : z.string().regex(HH_MM_SS, 'expected an interval HH:MM:SS');
    case 'number':
      return mode === 'create'
        ? z.number({ error: 'expected a finite number' }).finite()
        : z.union([z.number().finite(), numericString], { error: 'expected a finite number or a numeric string' });
    case 'icon':
      return mode === 'create' ? iconName : iconJsonString;
    case 'reference':
      return z.number({ error: 'expected the numeric id of the referenced record' }).int().positive();
    default:
      return z.json();
  }
}

const cache = new Map<string, z.ZodType>();

/**
 * The schema of one field's value in a record create or update body. `null` is accepted in both
 * modes, for every type: on update it clears the value ("any field may be set to null"), on
 * create it leaves the field empty; a computed field has no value of its own to clear or leave.
 */
export function recordValueSchema(type: FieldType, mode: ValueMode): z.ZodType {
  const key = `${type}:${mode}`;
  let schema = cache.get(key);
  if (!schema) {
    schema = baseSchema(type, mode).nullable();
    cache.set(key, schema);
  }
  return schema;
}

/** What a value shortcut answers when it does not decide: the schema does. */
export const ASK_SCHEMA: unique symbol = Symbol('ask the schema');

export type RecordValueShortcut = (raw: unknown) => unknown;

const isString = (raw: unknown): raw is string => typeof raw === 'string';
/** `YYYY-MM-DDTHH:MM:SS.mmmZ` */
const CANONICAL_TIMESTAMP_LENGTH = 24;
const asIs = (accepts: (raw: unknown) => boolean): RecordValueShortcut => (raw) => (raw === null || accepts(raw) ? raw : ASK_SCHEMA);

/**
 * The common, valid shapes of a value, accepted without running the schema: what
 * `recordValueSchema(type, mode)` outputs for them in either mode, through the same rules
 * (parseDate, parseTimestamp, formatTimestamp). Anything else (every invalid value too) gets
 * ASK_SCHEMA, and the schema decides and words the error. Bulk writes (the CSV import) check
 * millions of values, and a schema run costs far more than these tests.
 * test/api/value-shortcuts.test.ts holds each shortcut to its schema.
 */
export function recordValueShortcut(type: FieldType): RecordValueShortcut | undefined {
  if (PLAIN_TEXT_TYPES.has(type)) return asIs(isString);
  switch (type) {
    case 'number':
      return asIs((raw) => typeof raw === 'number' && Number.isFinite(raw));
    case 'boolean':
      return asIs((raw) => typeof raw === 'boolean');
    case 'choice':
      return asIs((raw) => isString(raw) && raw.length > 0);
    case 'date':
      return asIs((raw) => isString(raw) && parseDate(raw) !== undefined);
    case 'timestamp':
      return (raw) => {
        if (raw === null) return null;
        const ms = isString(raw) ? parseTimestamp(raw) : undefined;
        if (ms === undefined || !isString(raw)) return ASK_SCHEMA;
        // A valid timestamp of 24 characters has seconds and milliseconds: it is its canonical form.
        return raw.length === CANONICAL_TIMESTAMP_LENGTH ? raw : formatTimestamp(ms);
      };
    default:
      return undefined;
  }
}
