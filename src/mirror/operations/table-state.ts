import type { TableState } from '../catalog.ts';
import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { TableStatePatch } from '../mirror.ts';
import { mirroredTable } from './read-catalog.ts';
import { ensureReferenceIndexes } from './reference-indexes.ts';

/** Updates a table's sync state: its backfill state, last pull, and last error. */
export async function setTableState(ctx: MirrorContext, tableId: string, patch: TableStatePatch): Promise<void> {
  await mirroredTable(ctx, tableId);
  await ctx.driver.write((tx) => writeTableState(ctx, tx, tableId, patch));
}

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
  if (Object.keys(set).length === 0) return;
  await ctx.driver.catalog(tx.db).updateTable('_wsmirror_tables').set(set).where('table_id', '=', tableId).execute();
  if (patch.state === 'ready') await ensureReferenceIndexes(ctx, tx, tableId);
  ctx.tables = undefined;
}
