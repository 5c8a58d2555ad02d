import type { RowBatch, RowBatchResult, TableStatePatch } from '../mirror.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { writeCursors } from './cursors.ts';
import { checkLayout, encodeRows, tableRowsOf } from './encode-rows.ts';
import { localEditsOf } from './local-edits.ts';
import { mirroredTable } from './read-catalog.ts';
import { requireRecordId } from './record-ids.ts';
import { noteTableState, writeTableState } from './table-state.ts';

/**
 * The pull's write: deletes then upserts rows of one table in ONE transaction, with the cursors
 * and table state that cover them. The hot path of every sync: values are encoded before the
 * transaction opens (by `encodeRows` as pages arrive, or here), and rows go to the driver's bulk
 * path.
 */
export async function applyRows(ctx: MirrorContext, tableId: string, batch: RowBatch): Promise<RowBatchResult> {
  const info = await mirroredTable(ctx, tableId);
  const { table } = info;
  // Encode before opening the transaction: a bad value fails the batch without holding locks.
  let rows = batch.encoded === undefined ? undefined : tableRowsOf(batch.encoded, tableId);
  if (batch.upserts && batch.upserts.length > 0) rows = await encodeRows(ctx, tableId, batch.upserts, rows);
  if (rows) checkLayout(ctx, info, rows);
  const ids = rows?.sink.ids ?? [];
  const deletes = [...new Set((batch.deletes ?? []).map((id) => requireRecordId(id, table.sqlName)))];

  const patch: TableStatePatch = {
    ...(batch.state !== undefined ? { state: batch.state } : {}),
    ...(batch.pulled !== undefined ? { lastPullAt: new Date().toISOString(), currentAsOf: batch.pulled.currentAsOf, lastError: null } : {}),
    ...(batch.undone !== undefined ? { lastPullAt: batch.undone.lastPullAt, currentAsOf: batch.undone.currentAsOf } : {}),
  };
  const result = await ctx.driver.write(async (tx) => {
    // Local edits win until pushed, retried or discarded: rows and columns with outbox entries
    // are left as they are (the rare slow path; most batches touch none).
    const edits = await localEditsOf(ctx, tx, info, [...ids, ...deletes]);
    const deleting = edits ? deletes.filter((id) => !edits.wholeRows.has(id) && !edits.columns.has(id)) : deletes;
    const deleted = deleting.length > 0 ? await ctx.driver.deleteRows(tx, table.sqlName, deleting) : 0;
    if (rows && ids.length > 0) await ctx.driver.upsertRows(tx, table.sqlName, rows.columns, rows.sink, edits);
    writeCursors(ctx, tx, batch.cursors);
    await writeTableState(ctx, tx, tableId, patch);
    return { upserted: ids.length, deleted };
  });
  noteTableState(ctx, tableId, patch);
  ctx.logger?.debug({ table: table.sqlName, ...result }, 'rows applied');
  return result;
}
