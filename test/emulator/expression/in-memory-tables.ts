import type { FieldType } from '../../../src/api/index.ts';
import type { EvaluationHost } from '../../../src/emulator/expression/evaluator.ts';
import {
  valueTypeOf, type ExpressionScope, type FieldInfo, type RecordValue, type TableScope, type Value,
} from '../../../src/emulator/expression/scope.ts';

/**
 * Tables held in memory for the language's unit tests: a scope to check against and a host to
 * evaluate with. The HTTP tests use the real store; these pin the language down on its own.
 */
export interface MemoryTable extends TableScope {
  rows: RecordValue[];
}

export function memoryTable(key: number, name: string, fields: Record<string, FieldType>): MemoryTable {
  const infos = new Map<string, FieldInfo>(
    Object.entries(fields).map(([n, type], i) => [
      n, { name: n, id: `f${key * 100 + i}`, fieldType: type, valueType: valueTypeOf(type), writable: type !== 'function' },
    ]),
  );
  const table: MemoryTable = { key, name, field: (n) => infos.get(n), rows: [] };
  return table;
}

/** Adds a record given by field name; returns it. */
export function addRow(table: MemoryTable, values: Record<string, unknown>): RecordValue {
  const data: Record<string, unknown> = {};
  for (const [n, v] of Object.entries(values)) data[table.field(n)!.id] = v;
  const row = { table, id: table.rows.length + 1, data };
  table.rows.push(row);
  return row;
}

export function scopeOf(table: MemoryTable, others: MemoryTable[] = [], notInScope?: Map<string, string>): ExpressionScope {
  const all = new Map([table, ...others].map((t) => [t.name, t]));
  return { table, findTable: (n) => all.get(n), notInScope };
}

export function memoryHost(options: { now?: number; role?: string } = {}): EvaluationHost {
  return {
    now: () => options.now ?? Date.UTC(2026, 2, 1, 10, 0, 0),
    userRole: () => options.role ?? 'admin',
    readField: (record, field) => (record.data[field.id] ?? null) as Value,
    eachRecord: (table, visit) => {
      for (const row of (table as MemoryTable).rows) if (!visit(row)) return;
    },
  };
}
