import type { Field } from '../api/field.ts';
import type { FieldType } from '../api/field-types.ts';
import type { Table } from '../api/table.ts';
import type { Module, Workspace } from '../api/workspace.ts';
import type { Catalog, MirrorField, MirrorTable } from './catalog.ts';
import { desiredField, desiredTable, fieldChanges, tableChanges } from './desired-catalog.ts';
import { MirrorError } from './errors.ts';
import { DIALECTS } from './dialects.ts';
import {
  NameAllocator, SYSTEM_COLUMNS, baseColumnName, baseTableName, baseViewName, temporaryName, viewSalt, type NamingRules,
} from './naming.ts';
import type { TableFilter } from './table-filter.ts';
import { compileTableFilter } from './table-filter.ts';
import type { DialectName } from './dialect.ts';
import { valueKindOf } from './value-kind.ts';

/**
 * Schema planning: a pure diff of the catalog against the upstream workspace, giving the DDL and
 * catalog operations that make the mirror match it. `Mirror.applySchemaPlan` runs them in order,
 * in one transaction. Objects are matched by upstream id, so a rename is a rename in place.
 *
 * Order: drop tables, rename tables, then per table drop / rename / retype / add columns, create
 * tables, and last the catalog-only updates. Swapped names go through temporary names.
 */
export type SchemaOp =
  /** CREATE TABLE with its columns, catalog rows, comments. The table needs a backfill. */
  | { op: 'createTable'; table: MirrorTable; fields: MirrorField[] }
  /** DROP TABLE, its catalog rows and its cursors (excluded, or deleted upstream). */
  | { op: 'dropTable'; table: MirrorTable }
  /** ALTER TABLE … RENAME TO (an `updateTable` follows with the catalog row). */
  | { op: 'renameTable'; tableId: string; from: string; to: string }
  /** Rewrites the table's catalog row (and its Postgres comment). */
  | { op: 'updateTable'; table: MirrorTable; changes: string[] }
  /** ALTER TABLE … ADD COLUMN and the field's catalog rows. */
  | { op: 'addColumn'; sqlTable: string; field: MirrorField }
  /** ALTER TABLE … DROP COLUMN and the field's catalog rows. */
  | { op: 'dropColumn'; sqlTable: string; field: MirrorField }
  /** ALTER TABLE … RENAME COLUMN (an `updateField` follows with the catalog row). */
  | { op: 'renameColumn'; sqlTable: string; tableId: string; fieldId: string; from: string; to: string }
  /** Type change: when the storage kind changes the column is dropped and re-added (`rebuild`). */
  | { op: 'retypeColumn'; sqlTable: string; field: MirrorField; previousType: FieldType; rebuild: boolean }
  /** Rewrites the field's catalog rows (labels, options, position…) and its Postgres comment. */
  | { op: 'updateField'; sqlTable: string; field: MirrorField; changes: string[] };

export interface SchemaPlan {
  dialect: DialectName;
  /** Catalog revision the plan was made from; applying it to another revision is refused. */
  baseRevision: number;
  ops: SchemaOp[];
}

/**
 * Diffs `catalog` against `workspace`, keeping the tables `filter` selects. Tables whose ids are
 * in `hold` are left exactly as the catalog has them: not created, changed or dropped. Pure.
 */
export function planSchema(
  catalog: Catalog, workspace: Workspace, filter: TableFilter = {}, hold: ReadonlySet<string> = new Set(),
): SchemaPlan {
  const rules = DIALECTS[catalog.dialect].naming;
  const included = compileTableFilter(filter);

  const wanted: { module: Module; table: Table; fields: Field[] }[] = [];
  const seen = new Set<string>();
  for (const module of workspace.modules) {
    for (const table of module.tables) {
      if (seen.has(table.id)) throw new MirrorError(`the workspace lists table id ${table.id} twice`);
      seen.add(table.id);
      if (hold.has(table.id) || !included(module.name, table.name)) continue;
      // A missing list would read as "every field deleted": refuse instead of dropping columns.
      if (!table.fields) throw new MirrorError(`table ${module.name}.${table.name} arrived without its field list`);
      wanted.push({ module, table, fields: table.fields });
    }
  }

  const existing = new Map(catalog.tables.map((t) => [t.tableId, t]));
  const fieldsByTable = new Map<string, MirrorField[]>();
  for (const f of catalog.fields) {
    const list = fieldsByTable.get(f.tableId) ?? [];
    list.push(f);
    fieldsByTable.set(f.tableId, list);
  }

  // ---- table and view names (one namespace): unchanged tables keep theirs, the others get fresh
  // ones; a view is named after its table and renamed with it.
  const tableNames = new NameAllocator(rules.maxLength, catalog.foreignNames);
  for (const t of catalog.tables) if (hold.has(t.tableId)) claimTable(tableNames, t);
  const sqlNameOf = new Map<string, string>();
  const viewNameOf = new Map<string, string>();
  for (const w of wanted) {
    const old = existing.get(w.table.id);
    if (old && old.moduleName === w.module.name && old.tableName === w.table.name) {
      claimTable(tableNames, old);
      sqlNameOf.set(w.table.id, old.sqlName);
      if (old.viewName !== null) viewNameOf.set(w.table.id, old.viewName);
    }
  }
  allocateInOrder(
    wanted.filter((w) => !sqlNameOf.has(w.table.id)).map((w) => ({
      id: w.table.id, natural: `${w.module.name}__${w.table.name}`, base: baseTableName(rules, w.module.name, w.table.name),
    })),
    tableNames, sqlNameOf,
  );
  for (const w of wanted) {
    if (!viewNameOf.has(w.table.id)) viewNameOf.set(w.table.id, allocateViewName(tableNames, w.table.id, sqlNameOf.get(w.table.id)!));
  }

  const drops: SchemaOp[] = [];
  const wantedIds = new Set(wanted.map((w) => w.table.id));
  for (const t of catalog.tables) if (!wantedIds.has(t.tableId) && !hold.has(t.tableId)) drops.push({ op: 'dropTable', table: t });

  const tableRenames: { tableId: string; from: string; to: string }[] = [];
  const columnOps: SchemaOp[] = [];
  const creates: SchemaOp[] = [];
  const updates: SchemaOp[] = [];
  const fieldUpdates: SchemaOp[] = [];

  for (const w of wanted) {
    const sqlName = sqlNameOf.get(w.table.id)!;
    const viewName = viewNameOf.get(w.table.id)!;
    const old = existing.get(w.table.id);
    if (!old) {
      const table = desiredTable(w.module, w.table, sqlName, viewName, 'needs_backfill', { lastPullAt: null, currentAsOf: null });
      const columnOf = new Map<string, string>();
      allocateInOrder(columnRequests(rules, w.fields), new NameAllocator(rules.maxLength, SYSTEM_COLUMNS), columnOf);
      const fields = w.fields.map((f, i) => desiredField(catalog.dialect, w.table.id, f, i, columnOf.get(f.id)!));
      creates.push({ op: 'createTable', table, fields });
      continue;
    }
    if (old.sqlName !== sqlName) tableRenames.push({ tableId: old.tableId, from: old.sqlName, to: sqlName });

    const diff = planColumns(catalog.dialect, rules, sqlName, w.table.id, w.fields, fieldsByTable.get(old.tableId) ?? []);
    columnOps.push(...diff.ops);
    fieldUpdates.push(...diff.updates);

    const table = desiredTable(w.module, w.table, sqlName, viewName, old.state, old);
    if (diff.needsBackfill || table.mode !== old.mode) table.state = 'needs_backfill';
    const changes = tableChanges(old, table);
    if (changes.length > 0) updates.push({ op: 'updateTable', table, changes });
  }

  return {
    dialect: catalog.dialect,
    baseRevision: catalog.revision,
    ops: [
      ...drops,
      ...renameOps(tableRenames, new Set(catalog.tables.filter((t) => wantedIds.has(t.tableId)).map((t) => t.sqlName)),
        (r, from, to) => ({ op: 'renameTable', tableId: r.tableId, from, to })),
      ...columnOps,
      ...creates,
      ...updates,
      ...fieldUpdates,
    ],
  };
}

function claimTable(names: NameAllocator, t: MirrorTable): void {
  names.claim(t.sqlName);
  if (t.viewName !== null) names.claim(t.viewName);
}

function allocateViewName(names: NameAllocator, tableId: string, sqlName: string): string {
  return names.allocate(baseViewName(sqlName), viewSalt(tableId));
}

/**
 * View names for the tables of a catalog older than layout 3, which has none (the catalog
 * migration records them): allocated after every name in use, as the planner would.
 */
export function missingViewNames(catalog: Catalog): Map<string, string> {
  const names = new NameAllocator(DIALECTS[catalog.dialect].naming.maxLength, catalog.foreignNames);
  for (const t of catalog.tables) claimTable(names, t);
  const out = new Map<string, string>();
  for (const t of catalog.tables) if (t.viewName === null) out.set(t.tableId, allocateViewName(names, t.tableId, t.sqlName));
  return out;
}

/** Short human description of an operation, for logs. */
export function describeOp(op: SchemaOp): string {
  switch (op.op) {
    case 'createTable': return `create table ${op.table.sqlName} (${op.fields.length} columns)`;
    case 'dropTable': return `drop table ${op.table.sqlName}`;
    case 'renameTable': return `rename table ${op.from} to ${op.to}`;
    case 'updateTable': return `update catalog of table ${op.table.sqlName} (${op.changes.join(', ')})`;
    case 'addColumn': return `add column ${op.sqlTable}.${op.field.columnName} ${op.field.sqlType}`;
    case 'dropColumn': return `drop column ${op.sqlTable}.${op.field.columnName}`;
    case 'renameColumn': return `rename column ${op.sqlTable}.${op.from} to ${op.to}`;
    case 'retypeColumn':
      return `retype column ${op.sqlTable}.${op.field.columnName} from ${op.previousType} to ${op.field.fieldType}${op.rebuild ? ' (rebuilt)' : ''}`;
    case 'updateField': return `update catalog of column ${op.sqlTable}.${op.field.columnName} (${op.changes.join(', ')})`;
  }
}

// ---- columns -----------------------------------------------------------------------------------

function planColumns(
  dialect: DialectName, rules: NamingRules, sqlTable: string, tableId: string, upstream: Field[], current: MirrorField[],
): { ops: SchemaOp[]; updates: SchemaOp[]; needsBackfill: boolean } {
  const byId = new Map(current.map((f) => [f.fieldId, f]));
  const upstreamIds = new Set<string>();
  for (const f of upstream) {
    if (upstreamIds.has(f.id)) throw new MirrorError(`table ${sqlTable} lists field id ${f.id} twice`);
    upstreamIds.add(f.id);
  }

  const columns = new NameAllocator(rules.maxLength, SYSTEM_COLUMNS);
  const columnOf = new Map<string, string>();
  for (const f of upstream) {
    const old = byId.get(f.id);
    if (old && old.fieldName === f.name) {
      columns.claim(old.columnName);
      columnOf.set(f.id, old.columnName);
    }
  }
  allocateInOrder(columnRequests(rules, upstream.filter((f) => !columnOf.has(f.id))), columns, columnOf);

  const drops: SchemaOp[] = [];
  for (const old of current) if (!upstreamIds.has(old.fieldId)) drops.push({ op: 'dropColumn', sqlTable, field: old });

  const renames: { fieldId: string; from: string; to: string }[] = [];
  const retypes: SchemaOp[] = [];
  const adds: SchemaOp[] = [];
  const updates: SchemaOp[] = [];
  let needsBackfill = false;

  upstream.forEach((f, position) => {
    const field = desiredField(dialect, tableId, f, position, columnOf.get(f.id)!);
    const old = byId.get(f.id);
    if (!old) {
      adds.push({ op: 'addColumn', sqlTable, field });
      // Existing rows hold no value for the column; computed or defaulted fields have one upstream.
      if (field.readOnly || f.defaultValue !== undefined) needsBackfill = true;
      return;
    }
    if (old.columnName !== field.columnName) renames.push({ fieldId: f.id, from: old.columnName, to: field.columnName });
    // A column whose SQL type changed with its field unchanged is one an older layout typed
    // otherwise and its migration could not convert: rebuilt like a retype.
    if (old.fieldType !== field.fieldType || old.sqlType !== field.sqlType) {
      const rebuild = valueKindOf(old.fieldType) !== valueKindOf(field.fieldType) || old.sqlType !== field.sqlType;
      retypes.push({ op: 'retypeColumn', sqlTable, field, previousType: old.fieldType, rebuild });
      needsBackfill = true;
      return;
    }
    const changes = fieldChanges(old, field);
    if (changes.length > 0) updates.push({ op: 'updateField', sqlTable, field, changes });
    // A new expression changes the value of every record, and no record's change says so: the
    // table is read again. (A catalog from before expressions were kept just records it.)
    if (field.fieldType === 'function' && changes.includes('options') && old.options !== null) needsBackfill = true;
  });

  const held = new Set(current.filter((f) => upstreamIds.has(f.fieldId)).map((f) => f.columnName));
  return {
    ops: [
      ...drops,
      ...renameOps(renames, held, (r, from, to) => ({ op: 'renameColumn', sqlTable, tableId, fieldId: r.fieldId, from, to })),
      ...retypes,
      ...adds,
    ],
    updates,
    needsBackfill,
  };
}

interface NameRequest {
  id: string;
  /** The name the object would have without any prefix (`module__table`, the field name). */
  natural: string;
  /** The name asked for (prefixed when the natural one is reserved). */
  base: string;
}

function columnRequests(rules: NamingRules, fields: Field[]): NameRequest[] {
  return fields.map((f) => ({ id: f.id, natural: f.name, base: baseColumnName(rules, f.name) }));
}

/**
 * Objects that can have their natural name go first, so a field really called `f_id` keeps that
 * name rather than losing it to the field `id` (which becomes `f_id` only when it is free).
 */
function allocateInOrder(requests: NameRequest[], names: NameAllocator, out: Map<string, string>): void {
  for (const r of requests) if (r.base === r.natural) out.set(r.id, names.allocate(r.base, r.id));
  for (const r of requests) if (r.base !== r.natural) out.set(r.id, names.allocate(r.base, r.id));
}

/**
 * Rename operations. When a target name is still held by another object (a swap or a chain),
 * every rename goes through a temporary name first, which is always safe.
 */
function renameOps<R extends { from: string; to: string }>(
  renames: R[], held: Set<string>, make: (r: R, from: string, to: string) => SchemaOp,
): SchemaOp[] {
  const direct = renames.every((r) => !held.has(r.to));
  if (direct) return renames.map((r) => make(r, r.from, r.to));
  return [
    ...renames.map((r, i) => make(r, r.from, temporaryName(i))),
    ...renames.map((r, i) => make(r, temporaryName(i), r.to)),
  ];
}
