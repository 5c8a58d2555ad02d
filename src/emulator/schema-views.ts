import type { Field, Module, Table, Workspace } from '../api/index.ts';
import type { EmulatorContext } from './context.ts';
import type { FieldRow, ModuleRow, TableRow } from './store/schema-rows.ts';
import { workspaceName } from './store/schema-store.ts';

/** Response shapes of schema objects, built from stored rows. */
export function fieldView(row: FieldRow): Field {
  return { id: row.id, name: row.name, type: row.type, ...row.props };
}

/** Table responses always carry the table's fields, in position order. */
export function tableView(ctx: EmulatorContext, row: TableRow): Table {
  return { id: row.id, name: row.name, ...row.props, fields: ctx.schema.fieldsOf(row.key).map(fieldView) };
}

export function moduleView(ctx: EmulatorContext, row: ModuleRow): Module {
  return { id: row.id, name: row.name, ...row.props, tables: ctx.schema.tablesOf(row.key).map((t) => tableView(ctx, t)) };
}

export function workspaceView(ctx: EmulatorContext): Workspace {
  return { name: workspaceName(ctx), modules: ctx.schema.modules().map((m) => moduleView(ctx, m)) };
}
