import { sql } from 'kysely';
import type { ColumnSpec, SqlValue, WriteTx } from '../dialect.ts';
import { MirrorValueError } from '../errors.ts';
import type { RowBatch, RowBatchResult } from '../mirror.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN, SYNCED_AT_COLUMN } from '../naming.ts';
import type { EncodeNotes } from '../value-codec.ts';
import { apiToSql } from '../value-codec.ts';
import { writeCursors } from './cursors.ts';
import { localEditsOf } from './local-edits.ts';
import { mirroredTable } from './read-catalog.ts';
import { requireRecordId } from './record-ids.ts';
import { writeTableState } from './table-state.ts';

/**
 * The pull's write: deletes then upserts rows of one table in ONE transaction, with the cursors
 * and table state that cover them. The hot path of every sync: values are encoded before the
 * transaction opens, and rows go to the driver's bulk path.
 */
export async function applyRows(ctx: MirrorContext, tableId: string, batch: RowBatch): Promise<RowBatchResult> {
  const { table, fields } = await mirroredTable(ctx, tableId);
  const dialect = ctx.dialect.name;
  const types = ctx.dialect.systemColumnTypes;
  const columns: ColumnSpec[] = [
    { name: ID_COLUMN, sqlType: types.id },
    { name: SYNCED_AT_COLUMN, sqlType: types.syncedAt },
    ...fields.map((f) => ({ name: f.columnName, sqlType: f.sqlType })),
  ];
  const syncedAt = new Date().toISOString();

  // Encode before opening the transaction: a bad value fails the batch without holding locks.
  const rows = new Map<number, SqlValue[]>();
  const notes: EncodeNotes = { replacedText: false };
  for (const record of batch.upserts ?? []) {
    const id = requireRecordId(record.id, table.sqlName);
    const row: SqlValue[] = [id, syncedAt];
    for (const f of fields) {
      const value = Object.hasOwn(record.values, f.fieldName) ? record.values[f.fieldName] : null;
      try {
        row.push(apiToSql(f.fieldType, value, dialect, notes));
      } catch (error) {
        throw new MirrorValueError(`${table.sqlName} record ${id}, field ${f.fieldName}: ${(error as Error).message}`, { cause: error });
      }
      if (notes.replacedText) {
        notes.replacedText = false;
        ctx.logger?.warn({ table: table.sqlName, record: id, field: f.fieldName },
          'text with NUL or unpaired surrogates stored with U+FFFD in their place');
      }
    }
    rows.set(id, row);
  }
  const deletes = [...new Set((batch.deletes ?? []).map((id) => requireRecordId(id, table.sqlName)))];

  const result = await ctx.driver.write(async (tx) => {
    // Local edits win until pushed, retried or discarded: rows and columns with outbox entries
    // are left as they are (the rare slow path; most batches touch none).
    const edits = await localEditsOf(ctx, tx, tableId, [...rows.keys(), ...deletes]);
    const deleting = edits ? deletes.filter((id) => !edits.wholeRows.has(id) && !edits.columns.has(id)) : deletes;
    const deleted = deleting.length > 0 ? await ctx.driver.deleteRows(tx, table.sqlName, deleting) : 0;
    let bulk = [...rows.values()];
    if (edits) {
      bulk = [];
      for (const [id, row] of rows) {
        if (edits.wholeRows.has(id)) continue;
        const kept = edits.columns.get(id);
        if (kept) await upsertAround(ctx, tx, table.sqlName, columns, row, kept);
        else bulk.push(row);
      }
    }
    if (bulk.length > 0) await ctx.driver.upsertRows(tx, table.sqlName, columns, bulk);
    await writeCursors(ctx, tx, batch.cursors);
    if (batch.state !== undefined) await writeTableState(ctx, tx, tableId, { state: batch.state });
    return { upserted: rows.size, deleted };
  });
  ctx.logger?.debug({ table: table.sqlName, ...result }, 'rows applied');
  return result;
}

/** Upserts one row, leaving the columns in `kept` as they are in an existing row. */
async function upsertAround(
  ctx: MirrorContext, tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], row: readonly SqlValue[], kept: ReadonlySet<string>,
): Promise<void> {
  const updates = columns.filter((c) => c.name !== ID_COLUMN && !kept.has(c.name))
    .map((c) => sql`${sql.id(c.name)} = excluded.${sql.id(c.name)}`);
  await sql`INSERT INTO ${ctx.driver.table(sqlTable)} (${sql.join(columns.map((c) => sql.id(c.name)))})
    VALUES (${sql.join(row.map((v) => sql`${v}`))})
    ON CONFLICT (${sql.id(ID_COLUMN)}) DO UPDATE SET ${sql.join(updates)}`.execute(tx.db);
}
