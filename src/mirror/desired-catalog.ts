import type { Field, Option } from '../api/field.ts';
import { isReadOnlyType } from '../api/field-types.ts';
import type { Table } from '../api/table.ts';
import type { Module } from '../api/workspace.ts';
import type { Labels, MirrorField, MirrorTable, TableState } from './catalog.ts';
import { pickLabel } from './catalog.ts';
import type { DialectName } from './dialect.ts';
import { sqlTypeOf } from './dialects.ts';
import { storableJson, storableText } from './storable-text.ts';

/**
 * What the catalog should hold for an upstream table or field (its row as the mirror stores it),
 * and which columns of a stored row differ from it. The schema planner diffs with these.
 */

export function desiredTable(
  module: Module, table: Table, sqlName: string, viewName: string, state: TableState,
  pulled: Pick<MirrorTable, 'lastPullAt' | 'currentAsOf'>,
): MirrorTable {
  const hasHistory = table.hasHistory === true;
  return {
    tableId: table.id,
    moduleId: module.id,
    moduleName: module.name,
    moduleLabel: storableLabel(module.labels),
    tableName: table.name,
    label: storableLabel(table.labels),
    labels: storableLabels(table.labels),
    sqlName,
    viewName,
    hasHistory,
    mode: hasHistory ? 'history' : 'fullscan',
    state,
    lastPullAt: pulled.lastPullAt,
    currentAsOf: pulled.currentAsOf,
  };
}

export function desiredField(dialect: DialectName, tableId: string, f: Field, position: number, columnName: string): MirrorField {
  return {
    tableId,
    fieldId: f.id,
    fieldName: f.name,
    fieldType: f.type,
    label: storableLabel(f.labels),
    labels: storableLabels(f.labels),
    columnName,
    sqlType: sqlTypeOf(dialect, f.type),
    position,
    readOnly: isReadOnlyType(f.type),
    refTableId: f.refTableId ?? null,
    syncedFrom: f.syncedFrom ?? null,
    options: Array.isArray(f.options) ? f.options.map(normalizeOption)
      : typeof f.options === 'string' ? storableText(f.options)
      // A function field's expression: when it changes, every record's value may (schema-planner.ts).
      : f.type === 'function' && typeof f.expression === 'string' ? storableText(f.expression)
      : null,
  };
}

function normalizeOption(o: Option): Option {
  const out: Option = { id: o.id, name: storableText(o.name), order: o.order };
  if (o.labels !== undefined) out.labels = storableLabels(o.labels);
  if (o.color !== undefined) out.color = storableText(o.color);
  if (o.textColor !== undefined) out.textColor = storableText(o.textColor);
  if (o.icon !== undefined) out.icon = storableText(o.icon);
  return out;
}

/** Labels as the mirror stores them (storable-text.ts): upstream text may hold NUL. */
function storableLabels(labels: Labels | undefined): Labels {
  return (storableJson(labels ?? {}) as Labels);
}

function storableLabel(labels: Labels | undefined): string | null {
  return pickLabel(storableLabels(labels));
}

const TABLE_KEYS = [
  'moduleId', 'moduleName', 'moduleLabel', 'tableName', 'label', 'labels', 'sqlName', 'viewName', 'hasHistory', 'mode', 'state',
] as const satisfies readonly (keyof MirrorTable)[];

const FIELD_KEYS = [
  'fieldName', 'fieldType', 'label', 'labels', 'columnName', 'sqlType', 'position', 'readOnly', 'refTableId',
  'syncedFrom', 'options',
] as const satisfies readonly (keyof MirrorField)[];

export function tableChanges(a: MirrorTable, b: MirrorTable): string[] {
  return TABLE_KEYS.filter((k) => canonical(a[k]) !== canonical(b[k]));
}

export function fieldChanges(a: MirrorField, b: MirrorField): string[] {
  return FIELD_KEYS.filter((k) => canonical(a[k]) !== canonical(b[k]));
}

/** JSON with sorted keys: Postgres jsonb does not keep key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    }
    return v;
  }) ?? 'undefined';
}
