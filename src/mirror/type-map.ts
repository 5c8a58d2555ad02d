import type { FieldType } from '../api/field-types.ts';

export type DialectName = 'sqlite' | 'postgres';

/**
 * How a field's values are stored, independent of the dialect (DESIGN §3). Two field types with
 * the same kind store identical SQL values, so a type change within a kind keeps the column.
 */
export type ValueKind = 'number' | 'boolean' | 'date' | 'timestamp' | 'json' | 'reference' | 'text';

const KIND_BY_TYPE: Partial<Record<FieldType, ValueKind>> = {
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
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

/** Column types per dialect. These are fixed strings, the only SQL types the mirror emits. */
export const SQL_TYPES: Record<DialectName, Record<ValueKind, string>> = {
  postgres: {
    number: 'double precision',
    boolean: 'boolean',
    date: 'date',
    timestamp: 'timestamptz',
    json: 'jsonb',
    reference: 'bigint',
    text: 'text',
  },
  sqlite: {
    number: 'REAL',
    boolean: 'INTEGER',
    date: 'TEXT',
    timestamp: 'TEXT',
    json: 'TEXT',
    reference: 'INTEGER',
    text: 'TEXT',
  },
};

export function sqlTypeOf(dialect: DialectName, type: FieldType | string): string {
  return SQL_TYPES[dialect][valueKindOf(type)];
}

/** Types of the system columns. */
export const SYSTEM_SQL_TYPES: Record<DialectName, { id: string; syncedAt: string }> = {
  postgres: { id: 'bigint', syncedAt: 'timestamptz' },
  sqlite: { id: 'INTEGER', syncedAt: 'TEXT' },
};
