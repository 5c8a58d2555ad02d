import { backfillCursorKey, recordCursorKey, scanCursorKey } from '../mirror/catalog.ts';
import { changesBeforeScan, type SeenChanges } from './backfill-window.ts';
import { pullHistory } from './history-pull.ts';
import { BEGINNING, nextSince } from './poll-window.ts';
import { explainRefusedRecords } from './refused-pages.ts';
import { PullTally } from './row-writer.ts';
import { schemaMovedOr } from './schema-drift.ts';
import type { PulledTable, SyncContext } from './sync-context.ts';
import { scanTable } from './table-scan.ts';

export type TableAction = 'backfill' | 'changes' | 'scan' | 'skipped';

export interface TablePullResult {
  action: TableAction;
  /** Distinct rows written (a row read twice in one pull counts once). */
  upserted: number;
  deleted: number;
  /**
   * The upstream state the table now holds: when the pull (or the scan it resumed) began. The
   * pull's last write recorded it, with the last pull and no error. Absent when skipped.
   */
  currentAsOf?: Date;
}


/**
 * Brings one table up to date, choosing how from its mode and state:
 * - history, needs backfill: take the changes cursor first (persisted, so a crash resumes with
 *   the same one), scan the whole table (resuming an interrupted scan from its checkpoint), commit the cursor with the last rows, then poll the
 *   changes made meanwhile;
 * - history, ready: poll changes from the cursor;
 * - no history: full scan and diff when due (or forced) or when a backfill is needed.
 * A pull that reads records across a change of the table's schema upstream ends with
 * TableSchemaMovedError, for the engine to pull the schema again (schema-drift.ts).
 */
export async function pullTable(ctx: SyncContext, table: PulledTable, opts: PullOptions): Promise<TablePullResult> {
  try {
    return await pullAsDue(ctx, table, opts);
  } catch (error) {
    // Records read across a schema change upstream are no fault of the answer (schema-drift.ts).
    throw explainRefusedRecords(await schemaMovedOr(ctx, table, error), ctx.options.pageSize);
  }
}

interface PullOptions {
  forceFullScan: boolean;
  now: number;
  /** The cursors as the cycle began (after its schema pull): one read for every table. */
  cursors: ReadonlyMap<string, string>;
}

async function pullAsDue(ctx: SyncContext, table: PulledTable, opts: PullOptions): Promise<TablePullResult> {
  const { client, mirror, options } = ctx;
  const tally = new PullTally();
  if (table.mode === 'history') {
    const cursorKey = recordCursorKey(table.tableId);
    const since = opts.cursors.get(cursorKey);
    if (table.state === 'ready' && since !== undefined) {
      const currentAsOf = new Date();
      const result = await pullHistory(ctx, table, since, { currentAsOf: currentAsOf.toISOString() }, undefined, tally);
      return { action: 'changes', ...result, currentAsOf };
    }
    const backfillKey = backfillCursorKey(table.tableId);
    let from = await mirror.getCursor(backfillKey);
    let seen: SeenChanges | undefined;
    if (from === undefined) {
      const probe = await client.listRecordChanges(table.moduleName, table.tableName, { since: BEGINNING, limit: 1 });
      from = nextSince(probe.meta.asOf, options.lookbackMs);
      await mirror.setCursor(backfillKey, from);
      // Only for a scan that starts after it, in this run: a scan resumed from a checkpoint
      // (or a backfill from a stored cursor) may hold rows read before this point.
      const resumable = await mirror.getCursor(scanCursorKey(table.tableId));
      if (resumable === undefined) seen = await changesBeforeScan(ctx, table, from, probe.meta.asOf);
    }
    await scanTable(ctx, table, () => ({
      cursors: { [cursorKey]: from, [backfillKey]: null },
      state: 'ready',
    }), tally);
    // The scan read every record that lived through it (the pager steps back when records move);
    // what changed meanwhile is in the change feed from the cursor taken before it, less the
    // changes the scan is known to include (backfill-window.ts).
    const currentAsOf = new Date();
    await pullHistory(ctx, table, from, { currentAsOf: currentAsOf.toISOString() }, seen, tally);
    return { action: 'backfill', ...tally.totals, currentAsOf };
  }

  const lastPull = table.lastPullAt === null ? undefined : Date.parse(table.lastPullAt);
  const due = lastPull === undefined || opts.now - lastPull >= options.fullScanEveryMs;
  if (!opts.forceFullScan && !due && table.state === 'ready') return { action: 'skipped', upserted: 0, deleted: 0 };
  const scanned = await scanTable(ctx, table, (startedAt) => ({ state: 'ready', pulled: { currentAsOf: startedAt } }), tally);
  return { action: 'scan', upserted: scanned.upserted, deleted: scanned.deleted, currentAsOf: new Date(scanned.startedAt) };
}
