import type { FieldType } from '../../api/index.ts';

/**
 * What an expression can name, and the types and values it computes with. The store describes its
 * tables and fields through these interfaces (store/expression-scope.ts), so the language itself
 * knows nothing of SQLite or of how records are kept.
 */

/** The static type of a value: what the checker knows before any record is seen. */
export type ValueType =
  | 'number'
  | 'text'
  | 'boolean'
  | 'null'
  | 'any'
  | { readonly list: ValueType }
  | { readonly record: TableScope };

export interface FieldInfo {
  readonly name: string;
  /** Public field id (`f12`): stored values are keyed by it. */
  readonly id: string;
  readonly fieldType: FieldType;
  readonly valueType: ValueType;
  /** A trigger may assign it (not a computed type). */
  readonly writable: boolean;
}

export interface TableScope {
  /** Internal table key. */
  readonly key: number;
  readonly name: string;
  field(name: string): FieldInfo | undefined;
}

export interface ExpressionScope {
  /** The table of the record the expression runs for (`this`). */
  readonly table: TableScope;
  /** Tables `select` may name: those of the same module. */
  findTable(name: string): TableScope | undefined;
  /** Names of the table that exist but may not be named yet, with the reason (fields being created). */
  notInScope?: ReadonlyMap<string, string>;
}

/** A record as expressions see it: its table, its id (none before it is created), its stored data. */
export interface RecordValue {
  readonly table: TableScope;
  readonly id: number | undefined;
  readonly data: Readonly<Record<string, unknown>>;
}

export type Value = null | number | string | boolean | readonly Value[] | RecordValue;

export function isRecordValue(value: Value): value is RecordValue {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isListType(t: ValueType): t is { readonly list: ValueType } {
  return typeof t === 'object' && 'list' in t;
}

export function isRecordType(t: ValueType): t is { readonly record: TableScope } {
  return typeof t === 'object' && 'record' in t;
}

export function typeName(t: ValueType): string {
  if (typeof t === 'string') return t === 'any' ? 'any value' : t;
  if (isListType(t)) {
    if (t.list === 'any') return 'a list';
    return `a list of ${isRecordType(t.list) ? `${t.list.record.name} records` : typeName(t.list)}`;
  }
  return `a record of ${t.record.name}`;
}

/** Whether a value of type `actual` may stand where `wanted` is expected (null and any fit anywhere). */
export function fits(actual: ValueType, wanted: ValueType): boolean {
  if (actual === 'any' || wanted === 'any' || actual === 'null') return true;
  if (typeof wanted === 'string' || typeof actual === 'string') return actual === wanted;
  if (isListType(wanted)) return isListType(actual) && fits(actual.list, wanted.list);
  if (isRecordType(wanted)) return isRecordType(actual) && actual.record.key === wanted.record.key;
  return false;
}

/** The type of a value, for runtime checks and messages. */
export function typeOfValue(value: Value): ValueType {
  if (value === null) return 'null';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return { list: 'any' };
  return { record: (value as RecordValue).table };
}

/** The value type a field of each API type reads as. */
export function valueTypeOf(fieldType: FieldType): ValueType {
  switch (fieldType) {
    case 'number': case 'reference': return 'number';
    case 'boolean': return 'boolean';
    case 'multi': case 'dmulti': return { list: 'text' };
    case 'function': case 'any': case 'unknown': case 'lambda': case 'reverse': case 'rowId': case 'void': return 'any';
    default: return 'text';
  }
}
