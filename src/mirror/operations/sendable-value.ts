import type { MirrorField } from '../catalog.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { sqlToApi } from '../value-codec.ts';
import { valueKindOf } from '../value-kind.ts';
import { storedSqlValue } from './outbox-rows.ts';
import { CAPTURED_BLOB_KEY } from '../sql-text.ts';

/**
 * The value a pending edit sends for a field, from a row's column (a create) or from what an
 * update entry captured: its API shape, or why it cannot be sent.
 */
export type Sendable = { value: unknown } | { refused: string };

/** Field types whose values are free text, where an empty string is a value (spec, "Value shapes"). */
const FREE_TEXT_TYPES: ReadonlySet<string> = new Set(['string', 'html', 'react', 'styled']);

/**
 * The API value of a SQL value of `field`; a value the codec cannot read goes as stored
 * (upstream judges it) if JSON carries it as it is, and is otherwise refused with the codec's reason.
 */
export function sendable(ctx: MirrorContext, field: MirrorField, raw: unknown): Sendable {
  if (isBlob(raw)) return { refused: `${field.fieldName}: a BLOB cannot be sent upstream; write text or a number in the column instead` };
  // An empty cell (a BI tool's grid writes '') clears a field that holds no free text.
  if (raw === '' && !FREE_TEXT_TYPES.has(field.fieldType)) return { value: null };
  try {
    return { value: sqlToApi(field.fieldType, raw, ctx.dialect.name) };
  } catch (error) {
    // Text in a number column that is no decimal number is refused here: upstream could read it
    // as JavaScript does (' ' as 0, '0x1F' as 31) and store another number without a word.
    const judged = jsonCarries(raw) && !(typeof raw === 'string' && valueKindOf(field.fieldType) === 'number');
    return judged ? { value: raw } : { refused: `${field.fieldName}: ${(error as Error).message}` };
  }
}

/**
 * A float's NaN and infinities as captured: Postgres' to_jsonb and SQLite's capture write these
 * strings (an older SQLite wrote `Inf`, which is no JSON and arrives as text).
 */
const NON_FINITE_TEXT = new Set(['NaN', 'Infinity', '-Infinity', 'Inf', '-Inf']);

/** The API value of an update entry's captured `new_value`. */
export function capturedValue(ctx: MirrorContext, field: MirrorField, stored: unknown): Sendable {
  let raw = storedSqlValue(ctx, stored);
  if (typeof raw === 'string' && NON_FINITE_TEXT.has(raw) && valueKindOf(field.fieldType) === 'number') raw = Number(raw.replace(/Inf$/, 'Infinity'));
  return sendable(ctx, field, raw);
}

/** A SQLite BLOB: read from a row (a Buffer), or as an update entry captured it (sql-text.ts CAPTURED_BLOB_KEY). */
function isBlob(raw: unknown): boolean {
  if (raw instanceof Uint8Array) return true;
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 1 && CAPTURED_BLOB_KEY in raw;
}

/** Whether JSON.stringify gives back this value as it is (no NaN or infinity turned into null, no bigint). */
function jsonCarries(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(jsonCarries);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value as object).every(jsonCarries);
  return false;
}
