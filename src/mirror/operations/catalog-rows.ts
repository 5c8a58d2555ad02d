import type { Labels, MirrorField, MirrorTable } from '../catalog.ts';
import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';

/** Writes of the catalog rows that describe mirrored tables and fields (schema changes only). */

export async function insertTableRow(ctx: MirrorContext, tx: WriteTx, t: MirrorTable): Promise<void> {
  await ctx.driver.catalog(tx.db).insertInto('_wsmirror_tables')
    .values({ table_id: t.tableId, last_pull_at: t.lastPullAt, ...tableRow(ctx, t) })
    .execute();
}

export async function updateTableRow(ctx: MirrorContext, tx: WriteTx, t: MirrorTable): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  await cat.updateTable('_wsmirror_tables').set(tableRow(ctx, t)).where('table_id', '=', t.tableId).execute();
  await cat.updateTable('_wsmirror_choice_options').set({ sql_table: t.sqlName }).where('table_id', '=', t.tableId).execute();
}

/** A table's catalog row as a schema change writes it (`last_pull_at` belongs to the pull). */
function tableRow(ctx: MirrorContext, t: MirrorTable) {
  return {
    module_id: t.moduleId,
    module_name: t.moduleName,
    module_label: t.moduleLabel,
    table_name: t.tableName,
    label: t.label,
    labels: JSON.stringify(t.labels),
    sql_name: t.sqlName,
    view_name: t.viewName,
    has_history: ctx.dialect.booleanToSql(t.hasHistory),
    mode: t.mode,
    state: t.state,
    schema_changed_at: new Date().toISOString(),
  };
}

export async function touchTableRow(ctx: MirrorContext, tx: WriteTx, tableId: string): Promise<void> {
  await ctx.driver.catalog(tx.db).updateTable('_wsmirror_tables')
    .set({ schema_changed_at: new Date().toISOString() }).where('table_id', '=', tableId).execute();
}

export async function deleteFieldRows(ctx: MirrorContext, tx: WriteTx, tableId: string, fieldId: string): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  await cat.deleteFrom('_wsmirror_fields').where('table_id', '=', tableId).where('field_id', '=', fieldId).execute();
  await cat.deleteFrom('_wsmirror_choice_options').where('table_id', '=', tableId).where('field_id', '=', fieldId).execute();
}

/** The field's catalog row and its choice options, replacing what was there. */
export async function writeFieldRows(ctx: MirrorContext, tx: WriteTx, sqlTable: string, f: MirrorField): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  await deleteFieldRows(ctx, tx, f.tableId, f.fieldId);
  await cat.insertInto('_wsmirror_fields').values({
    table_id: f.tableId,
    field_id: f.fieldId,
    field_name: f.fieldName,
    field_type: f.fieldType,
    label: f.label,
    labels: JSON.stringify(f.labels),
    column_name: f.columnName,
    sql_type: f.sqlType,
    position: f.position,
    is_read_only: ctx.dialect.booleanToSql(f.readOnly),
    ref_table_id: f.refTableId,
    synced_from: f.syncedFrom,
    options: f.options === null ? null : JSON.stringify(f.options),
  }).execute();
  if (Array.isArray(f.options) && f.options.length > 0) {
    const seen = new Set<string>();
    const rows = f.options.filter((o) => !seen.has(o.id) && seen.add(o.id)).map((o) => ({
      table_id: f.tableId,
      field_id: f.fieldId,
      sql_table: sqlTable,
      column_name: f.columnName,
      option_id: o.id,
      name: o.name,
      label: pickOptionLabel(o.labels, o.name),
      labels: JSON.stringify(o.labels ?? {}),
      option_order: o.order,
      color: o.color ?? null,
      text_color: o.textColor ?? null,
      icon: o.icon ?? null,
    }));
    await cat.insertInto('_wsmirror_choice_options').values(rows).execute();
  }
}

function pickOptionLabel(labels: Labels | undefined, name: string): string {
  if (!labels) return name;
  return labels[''] || labels['en'] || name;
}
