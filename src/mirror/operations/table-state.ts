import type { TableState } from '../catalog.ts';
import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { mirroredTable } from './read-catalog.ts';
import { ensureReferenceIndexes } from './reference-indexes.ts';

export interface TableStatePatch {
  state?: TableState;
  lastPullAt?: string | null;
}

/** Updates a table's sync state and/or the time of its last successful pull. */
export async function setTableState(ctx: MirrorContext, tableId: string, patch: TableStatePatch): Promise<void> {
  await mirroredTable(ctx, tableId);
  await ctx.driver.write((tx) => writeTableState(ctx, tx, tableId, patch));
}

export async function writeTableState(ctx: MirrorContext, tx: WriteTx, tableId: string, patch: TableStatePatch): Promise<void> {
  const set: { state?: string; last_pull_at?: string | null } = {};
  if (patch.state !== undefined) set.state = patch.state;
  if (patch.lastPullAt !== undefined) set.last_pull_at = patch.lastPullAt;
  if (Object.keys(set).length === 0) return;
  await ctx.driver.catalog(tx.db).updateTable('_wsmirror_tables').set(set).where('table_id', '=', tableId).execute();
  if (patch.state === 'ready') await ensureReferenceIndexes(ctx, tx, tableId);
  ctx.tables = undefined;
}
