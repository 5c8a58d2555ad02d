import type { Field } from '../../src/api/field.ts';
import type { FieldType } from '../../src/api/field-types.ts';
import type { Table } from '../../src/api/table.ts';
import type { Module, Workspace } from '../../src/api/workspace.ts';
import type { Mirror } from '../../src/mirror/mirror.ts';
import type { SchemaPlan } from '../../src/mirror/schema-planner.ts';
import { planSchema } from '../../src/mirror/schema-planner.ts';
import type { TableFilter } from '../../src/mirror/table-filter.ts';

/** Builders for workspace responses, shaped like the API's (ids on every object). */
export function field(id: string, name: string, type: FieldType, extra: Partial<Field> = {}): Field {
  return { id, name, type, labels: { '': `${name} label` }, ...extra };
}

export function table(id: string, name: string, fields: Field[], extra: Partial<Table> = {}): Table {
  return { id, name, labels: { '': `${name} label` }, hasHistory: true, fields, ...extra };
}

export function module(id: string, name: string, tables: Table[]): Module {
  return { id, name, labels: { '': `${name} module` }, tables };
}

export function workspace(...modules: Module[]): Workspace {
  return { name: 'test', modules };
}

/** Plans against the current catalog and applies; returns the plan. */
export async function sync(mirror: Mirror, ws: Workspace, filter: TableFilter = {}): Promise<SchemaPlan> {
  const plan = planSchema(await mirror.readCatalog(), ws, filter);
  await mirror.applySchemaPlan(plan);
  return plan;
}

/** One field of every type, with a value of the API's canonical shape for each. */
export const EVERY_TYPE: { type: FieldType; value: unknown }[] = [
  { type: 'any', value: { nested: { a: [1, 'two', null, true] }, n: 1.5 } },
  { type: 'appointment', value: '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)' },
  { type: 'boolean', value: true },
  { type: 'choice', value: 'opt_a' },
  { type: 'color', value: '#12ab9f' },
  { type: 'date', value: '2024-02-29' },
  { type: 'dchoice', value: '42' },
  { type: 'dmulti', value: ['1', '7'] },
  { type: 'file', value: 'file_123' },
  { type: 'function', value: 12.5 },
  { type: 'html', value: '<p>Hi &amp; "bye"\n</p>' },
  { type: 'icon', value: 'star' },
  { type: 'lambda', value: { fn: 'x' } },
  { type: 'multi', value: ['opt_a', 'opt_b'] },
  { type: 'number', value: 0.1 + 0.2 },
  { type: 'react', value: 'component' },
  { type: 'reference', value: 9007199254740991 },
  { type: 'reverse', value: [3, 4] },
  { type: 'rowId', value: 17 },
  { type: 'string', value: 'tab\there, newline\nthere, backslash \\ quote \' "dq" é ☃' },
  { type: 'styled', value: 'bold' },
  { type: 'time', value: '23:59' },
  { type: 'timeinterval', value: '01:30:00' },
  { type: 'timestamp', value: '2026-01-31T12:34:56.789Z' },
  { type: 'unknown', value: [1, { b: 'c' }] },
  { type: 'user', value: 'user_9' },
  { type: 'void', value: null },
];
