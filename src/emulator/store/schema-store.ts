import { REFERENCE_TYPES, type TableCreate, type TablePatch } from '../../api/index.ts';
import type { ModuleCreate } from '../admin-contract.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { refreshExpressionErrors } from './expression-errors.ts';
import { removeFields } from './field-store.ts';
import { publicId } from './ids.ts';
import { requireGrantForProperties } from './permission-grant.ts';
import type { ModuleProps, ModuleRow, TableProps, TableRow } from './schema-rows.ts';
import { normalizeRoles, sameJson, transaction } from './schema-writes.ts';
import { dropTableIndexes } from './table-indexes.ts';

/**
 * Schema mutations. Every mutation validates everything first, then applies in one transaction
 * stamped once, appending schema change events; a failure leaves the state unchanged. Routes, the
 * admin surface and the seed loader all go through here.
 *
 * This file holds the workspace name, modules and tables; fields are in field-store.ts, the rules
 * a field request must pass in field-rules.ts.
 */

export const DEFAULT_WORKSPACE_NAME = 'Demo workspace';
export const DEFAULT_ROLES: readonly string[] = ['admin', 'editor'];
export const DEFAULT_MODULE_ICON = { color: '#546e7a', filling: 0, icon: 'folder' } as const;
export const DEFAULT_TABLE_ICON = { color: '#1e88e5', filling: 0, icon: 'table' } as const;

// ---- workspace name ------------------------------------------------------------------------

export function workspaceName(ctx: EmulatorContext): string {
  const row = ctx.db.prepare(`SELECT value FROM meta WHERE key = 'workspace_name'`).get() as { value: string } | undefined;
  return row?.value ?? DEFAULT_WORKSPACE_NAME;
}

export function setWorkspaceName(ctx: EmulatorContext, name: string): void {
  ctx.db
    .prepare(`INSERT INTO meta (key, value) VALUES ('workspace_name', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
    .run(name);
}

// ---- modules -------------------------------------------------------------------------------

export function createModule(ctx: EmulatorContext, input: ModuleCreate): ModuleRow {
  return transaction(ctx, () => {
    const exists = ctx.db.prepare('SELECT 1 FROM modules WHERE name = ?').get(input.name);
    if (exists) throw new BadRequestError(`module ${input.name} already exists`);
    const props: ModuleProps = {
      labels: input.labels ?? {},
      icon: { ...DEFAULT_MODULE_ICON, ...input.icon },
      isHidden: input.isHidden ?? false,
      hideNavigation: input.hideNavigation ?? false,
      openRoles: normalizeRoles(input.openRoles ?? DEFAULT_ROLES),
    };
    const key = Number(
      ctx.db.prepare('INSERT INTO modules (name, props) VALUES (?, ?)').run(input.name, JSON.stringify(props)).lastInsertRowid,
    );
    ctx.changes.schemaChanged('Module', publicId('module', key), 'upserted', ctx.changes.stamp());
    return ctx.schema.requireModule(input.name);
  });
}

/** Deletes a module with its tables, fields, records and record change logs. */
export function deleteModule(ctx: EmulatorContext, name: string): { id: string } {
  return transaction(ctx, () => {
    const mod = ctx.schema.requireModule(name);
    const at = ctx.changes.stamp();
    dropTables(ctx, ctx.schema.tablesOf(mod.key), at);
    ctx.db.prepare('DELETE FROM modules WHERE id = ?').run(mod.key);
    ctx.changes.schemaChanged('Module', mod.id, 'deleted', at);
    return { id: mod.id };
  });
}

// ---- tables --------------------------------------------------------------------------------

type TableRoleLists = Pick<TablePatch, 'createRoles' | 'deleteRoles' | 'readRoles' | 'writeRoles'>;
export type TableInput = TableCreate & TableRoleLists;

const ROLE_LISTS = ['createRoles', 'deleteRoles', 'readRoles', 'writeRoles'] as const;

export function createTable(ctx: EmulatorContext, moduleName: string, input: TableInput): TableRow {
  return transaction(ctx, () => {
    const mod = ctx.schema.requireModule(moduleName);
    if (ctx.schema.findTable(moduleName, input.name)) {
      throw new BadRequestError(`table ${input.name} already exists in module ${moduleName}`);
    }
    const props: TableProps = {
      labels: input.labels ?? {},
      icon: { ...DEFAULT_TABLE_ICON, ...input.icon },
      hasFiles: input.hasFiles ?? false,
      hasGlobalSearch: input.hasGlobalSearch ?? false,
      hasHistory: input.hasHistory ?? false,
      isEmailLinkingEnabled: input.isEmailLinkingEnabled ?? false,
      isHidden: input.isHidden ?? false,
    };
    for (const list of ROLE_LISTS) props[list] = normalizeRoles(input[list] ?? DEFAULT_ROLES);
    const key = Number(
      ctx.db
        .prepare('INSERT INTO tables (module_id, name, props) VALUES (?, ?, ?)')
        .run(mod.key, input.name, JSON.stringify(props)).lastInsertRowid,
    );
    const at = ctx.changes.stamp();
    ctx.changes.schemaChanged('Table', publicId('table', key), 'upserted', at);
    const row = ctx.schema.tableByKey(key)!;
    // Expressions that select a table of this name check from now on.
    refreshExpressionErrors(ctx, row, { tables: [row.name] }, at);
    return row;
  });
}

/**
 * Renames, toggles flags, sets roles; `labels` replaces the map, `icon` merges into the current one.
 * Role lists decide who reads and writes the records: setting them needs the permission grant.
 */
export function updateTable(ctx: EmulatorContext, table: TableRow, patch: TablePatch, actor: ApiKeyGrant): TableRow {
  requireGrantForProperties(actor, patch, ROLE_LISTS, 'body');
  return transaction(ctx, () => {
    const name = patch.name ?? table.name;
    if (name !== table.name && ctx.schema.findTable(table.moduleName, name)) {
      throw new BadRequestError(`table ${name} already exists in module ${table.moduleName}`);
    }
    const props: TableProps = { ...table.props };
    if (patch.labels !== undefined) props.labels = patch.labels;
    if (patch.icon !== undefined) props.icon = { ...DEFAULT_TABLE_ICON, ...table.props.icon, ...patch.icon };
    for (const flag of ['hasFiles', 'hasGlobalSearch', 'hasHistory', 'isEmailLinkingEnabled', 'isHidden'] as const) {
      if (patch[flag] !== undefined) props[flag] = patch[flag];
    }
    for (const list of ROLE_LISTS) {
      const roles = patch[list];
      if (roles !== undefined) props[list] = normalizeRoles(roles);
    }
    if (name === table.name && sameJson(props, table.props)) return table;
    ctx.db.prepare('UPDATE tables SET name = ?, props = ? WHERE id = ?').run(name, JSON.stringify(props), table.key);
    const at = ctx.changes.stamp();
    ctx.changes.schemaChanged('Table', table.id, 'upserted', at);
    if (name !== table.name) refreshExpressionErrors(ctx, table, { tables: [table.name, name] }, at);
    return ctx.schema.tableByKey(table.key)!;
  });
}

/**
 * Deletes a table with its fields, its records and its record change log, and the reference and
 * reverse fields of other tables that point at it.
 */
export function deleteTable(ctx: EmulatorContext, table: TableRow): { id: string } {
  return transaction(ctx, () => {
    dropTables(ctx, [table], ctx.changes.stamp());
    return { id: table.id };
  });
}

/**
 * Drops tables and everything of theirs. Reference and reverse fields of the remaining tables
 * that point at one of them are dropped first: the spec allows no 400 on a table delete, and a
 * field whose table is gone cannot be read or written.
 */
function dropTables(ctx: EmulatorContext, tables: readonly TableRow[], at: number): void {
  const keys = new Set(tables.map((t) => t.key));
  const referring = referringFields(ctx, tables.map((t) => t.id)).filter((f) => !keys.has(f.tableKey));
  const referringByTable = Map.groupBy(referring, (f) => f.tableKey);
  for (const [tableKey, fields] of referringByTable) removeFields(ctx, tableKey, fields, at);
  for (const table of tables) {
    for (const field of ctx.schema.fieldsOf(table.key)) ctx.changes.schemaChanged('Field', field.id, 'deleted', at);
    ctx.db.prepare('DELETE FROM records WHERE table_id = ?').run(table.key);
    ctx.changes.dropTable(table.key);
    ctx.db.prepare('DELETE FROM fields WHERE table_id = ?').run(table.key);
    ctx.db.prepare('DELETE FROM tables WHERE id = ?').run(table.key);
    dropTableIndexes(ctx.db, { tableKey: table.key });
    ctx.changes.schemaChanged('Table', table.id, 'deleted', at);
  }
  // Expressions of the remaining tables that selected a dropped table or named a dropped field.
  const [first] = tables;
  if (!first) return;
  const fields = [...referringByTable].map(([key, removed]) => ({
    table: { key, name: ctx.schema.tableByKey(key)!.name }, names: removed.map((f) => f.name),
  }));
  refreshExpressionErrors(ctx, first, { tables: tables.map((t) => t.name), fields }, at);
}

/** Reference and reverse fields whose `refTableId` is one of `tableIds`, in creation order. */
function referringFields(ctx: EmulatorContext, tableIds: readonly string[]): { key: number; id: string; name: string; tableKey: number }[] {
  const rows = ctx.db
    .prepare(
      `SELECT id, name, table_id FROM fields
       WHERE type IN (SELECT value FROM json_each(?)) AND json_extract(props, '$.refTableId') IN (SELECT value FROM json_each(?))
       ORDER BY id`,
    )
    .all(JSON.stringify(REFERENCE_TYPES), JSON.stringify(tableIds)) as { id: number; name: string; table_id: number }[];
  return rows.map((r) => ({ key: r.id, id: publicId('field', r.id), name: r.name, tableKey: r.table_id }));
}
