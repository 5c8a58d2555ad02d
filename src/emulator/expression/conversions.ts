import { isRecordValue, type Value } from './scope.ts';

/**
 * How values turn into text and numbers and how they compare: shared by the operators
 * (evaluator.ts) and the functions (functions.ts).
 */

/** Longest text an expression may build, so `+` and concat() cannot fill the memory. */
export const MAX_TEXT_LENGTH = 1_000_000;

export class ConversionFailure extends Error {}

export function toText(value: Value): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return (value as readonly Value[]).map(toText).join(', ');
  return isRecordValue(value) && value.id !== undefined ? String(value.id) : '';
}

/** A number from a number, a numeric text (spaces allowed) or a boolean; null when there is none. */
export function toNumber(value: Value): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function checkedText(text: string): string {
  if (text.length > MAX_TEXT_LENGTH) throw new ConversionFailure(`the text would be longer than ${MAX_TEXT_LENGTH} characters`);
  return text;
}

/** `=`: same type and value; lists item by item; records by table and id. Null equals only null. */
export function equals(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return (a as readonly Value[]).every((item, i) => equals(item, (b as readonly Value[])[i]!));
  }
  if (isRecordValue(a) || isRecordValue(b)) {
    return isRecordValue(a) && isRecordValue(b) && a.table.key === b.table.key && a.id !== undefined && a.id === b.id;
  }
  return a === b;
}

/**
 * `<` and friends: numbers numerically, texts by code point (so canonical dates and timestamps
 * compare chronologically), booleans false before true. Undefined when the two cannot be ordered
 * (a null, or different types): the comparison is then false.
 */
export function compare(a: Value, b: Value): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return undefined;
}

/** Conditions: true is true; false, null and anything else are false. */
export function isTrue(value: Value): boolean {
  return value === true;
}
