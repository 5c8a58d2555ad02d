import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { TableStatePatch } from '../mirror.ts';
import { mirroredTable } from './read-catalog.ts';
import { ensureReferenceIndexes } from './reference-indexes.ts';

/** Updates a table's sync state: its backfill state, last pull, and last error. */
export async function setTableState(ctx: MirrorContext, tableId: string, patch: TableStatePatch): Promise<void> {
  await mirroredTable(ctx, tableId);
  await ctx.driver.write((tx) => writeTableState(ctx, tx, tableId, patch));
  noteTableState(ctx, tableId, patch);
}

/**
 * After the write committed: the tables the context holds take the new state, last pull and
 * current as of (the last error is not held there), instead of the whole catalog being read
 * again at the next table's first batch.
 */
export function noteTableState(ctx: MirrorContext, tableId: string, patch: TableStatePatch): void {
  const held = ctx.tables?.get(tableId)?.table;
  if (held === undefined) return;
  if (patch.state !== undefined) held.state = patch.state;
  if (patch.lastPullAt !== undefined) held.lastPullAt = patch.lastPullAt;
  if (patch.currentAsOf !== undefined) held.currentAsOf = patch.currentAsOf;
}

/** Writes a table's state at the commit of `tx`; the reference indexes once its first full read ends. */
export async function writeTableState(ctx: MirrorContext, tx: WriteTx, tableId: string, patch: TableStatePatch): Promise<void> {
  const set: {
    state?: string; last_pull_at?: string | null; current_as_of?: string | null;
    last_error_code?: string | null; last_error?: string | null; last_error_at?: string | null;
  } = {};
  if (patch.state !== undefined) set.state = patch.state;
  if (patch.lastPullAt !== undefined) set.last_pull_at = patch.lastPullAt;
  if (patch.currentAsOf !== undefined) set.current_as_of = patch.currentAsOf;
  if (patch.lastError !== undefined) {
    set.last_error_code = patch.lastError?.code ?? null;
    set.last_error = patch.lastError?.message ?? null;
    set.last_error_at = patch.lastError?.at ?? null;
  }
  if (Object.keys(set).length > 0) tx.atCommit([ctx.driver.catalog(tx.db).updateTable('_wsmirror_tables').set(set).where('table_id', '=', tableId).compile()]);
  // Indexes are built when a table's full read ends, not at every periodic scan of a ready one.
  if (patch.state === 'ready' && ctx.tables?.get(tableId)?.table.state !== 'ready') await ensureReferenceIndexes(ctx, tx, tableId);
}
