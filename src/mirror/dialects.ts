import type { FieldType } from '../api/field-types.ts';
import type { Dialect, DialectName } from './dialect.ts';
import { postgresDialect } from './postgres/dialect.ts';
import { sqliteDialect } from './sqlite/dialect.ts';
import { valueKindOf } from './value-kind.ts';

/** The dialects the mirror speaks, by name. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  sqlite: sqliteDialect,
  postgres: postgresDialect,
};

/** The SQL type of a field of `type` in `dialect`. */
export function sqlTypeOf(dialect: DialectName, type: FieldType | string): string {
  return DIALECTS[dialect].columnTypes[valueKindOf(type)];
}
