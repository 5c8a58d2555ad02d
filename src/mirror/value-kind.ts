import type { FieldType } from '../api/field-types.ts';

/**
 * How a field's values are stored, independent of the dialect (DESIGN §3). Two field types with
 * the same kind store identical SQL values, so a type change within a kind keeps the column. Each
 * dialect maps kinds to its SQL types (`Dialect.columnTypes`).
 */
export type ValueKind = 'number' | 'boolean' | 'date' | 'timestamp' | 'range' | 'json' | 'reference' | 'text';

const KIND_BY_TYPE: Partial<Record<FieldType, ValueKind>> = {
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  // A span of two timestamps: a range type where the dialect has one (Dialect.appointments).
  appointment: 'range',
  reference: 'reference',
  // Structured or unknown shapes: JSON keeps any value exactly.
  multi: 'json',
  dmulti: 'json',
  any: 'json',
  unknown: 'json',
  function: 'json',
  lambda: 'json',
  reverse: 'json',
  rowId: 'json',
  void: 'json',
};

/** The storage kind of a field type; types not listed (and future ones) are text. */
export function valueKindOf(type: FieldType | string): ValueKind {
  return KIND_BY_TYPE[type as FieldType] ?? 'text';
}
