import type { Labels, MirrorField, MirrorTable } from '../catalog.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { chunks } from './outbox-rows.ts';

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

/** The catalog rows (field rows and choice options) of these fields of one table. */
export async function deleteFieldRows(ctx: MirrorContext, tx: WriteTx, tableId: string, fieldIds: readonly string[]): Promise<void> {
  if (fieldIds.length === 0) return;
  const cat = ctx.driver.catalog(tx.db);
  await cat.deleteFrom('_wsmirror_fields').where('table_id', '=', tableId).where('field_id', 'in', fieldIds).execute();
  await cat.deleteFrom('_wsmirror_choice_options').where('table_id', '=', tableId).where('field_id', 'in', fieldIds).execute();
}

/** Rows per multi-row insert: a field row binds 13 values, an option row 12. */
const ROWS_PER_INSERT = 500;

/**
 * The catalog rows and choice options of fields of the table `sqlTable`, replacing what was
 * there: a few statements for all of them (a new table has dozens), not a few per field.
 */
export async function writeFieldRows(ctx: MirrorContext, tx: WriteTx, sqlTable: string, fields: readonly MirrorField[]): Promise<void> {
  if (fields.length === 0) return;
  const cat = ctx.driver.catalog(tx.db);
  await deleteFieldRows(ctx, tx, fields[0]!.tableId, fields.map((f) => f.fieldId));
  const fieldRows = fields.map((f) => ({
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
  }));
  for (const chunk of chunks(fieldRows, ROWS_PER_INSERT)) await cat.insertInto('_wsmirror_fields').values(chunk).execute();
  const optionRows = fields.flatMap((f) => {
    if (!Array.isArray(f.options)) return [];
    const seen = new Set<string>();
    return f.options.filter((o) => !seen.has(o.id) && seen.add(o.id)).map((o) => ({
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
  });
  for (const chunk of chunks(optionRows, ROWS_PER_INSERT)) await cat.insertInto('_wsmirror_choice_options').values(chunk).execute();
}

function pickOptionLabel(labels: Labels | undefined, name: string): string {
  if (!labels) return name;
  return labels[''] || labels['en'] || name;
}
