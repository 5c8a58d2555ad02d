/**
 * Turns what the engine reports during a cycle into metrics and progress, and keeps the tally a
 * stopped cycle prints (which tables were finished, which were left).
 */
import type { SyncObserver } from '../sync/index.ts';
import type { Metrics } from './metrics.ts';
import type { ProgressReporter, ProgressTask } from './progress.ts';

export interface CycleTally {
  /** Every table the mirror holds, as of the last schema pull. */
  readonly tables: readonly string[];
  /** Tables the running (or last) cycle is done with. */
  readonly pulled: ReadonlySet<string>;
  /** Rows read so far by this cycle's backfills and scans, per table. */
  readonly rowsRead: ReadonlyMap<string, number>;
}

export interface CycleObserver extends SyncObserver {
  tally(): CycleTally;
  /** Forgets the last cycle's tally: called when a cycle begins. */
  reset(): void;
}

export interface CycleObserverDeps {
  metrics?: Metrics;
  progress?: ProgressReporter;
}

export function createCycleObserver(deps: CycleObserverDeps): CycleObserver {
  const tasks = new Map<string, ProgressTask>();
  const rowsRead = new Map<string, number>();
  const pulled = new Set<string>();
  let tables: readonly string[] = [];
  return {
    rowsApplied: (table, operation, count) => deps.metrics?.observeRowsApplied(table, operation, count),
    scanProgress: (table, rows) => {
      rowsRead.set(table, (rowsRead.get(table) ?? 0) + rows);
      tasks.get(table)?.add(rows);
    },
    scanFinished: (table) => {
      tasks.get(table)?.done();
      tasks.delete(table);
    },
    scanStarted: (table, started) => {
      if (!deps.progress) return;
      const task = deps.progress.task(table);
      tasks.set(table, task);
      // A resumed scan shows what its earlier runs read: the percentage is of the whole table.
      if (started.estimatedRows !== null) task.setTotal(started.estimatedRows);
      task.add(started.rowsRead);
    },
    tablePulled: (table, currentAsOf) => deps.metrics?.setTableCurrentAsOf(table, currentAsOf),
    tablePullUndone: (table, before) => deps.metrics?.setTablePullState(table, before),
    tableFinished: (table) => {
      pulled.add(table);
    },
    tablesMirrored: (mirrored) => {
      tables = mirrored.map((t) => t.table);
      deps.metrics?.setTables(mirrored);
    },
    outboxChecked: (counts, oldestPendingAt, waiting) => {
      deps.metrics?.setOutboxDepth(counts);
      deps.metrics?.setOldestPendingEdit(oldestPendingAt);
      deps.metrics?.setWaitingEdits(waiting);
    },
    tally: () => ({ tables, pulled, rowsRead }),
    reset: () => {
      pulled.clear();
      rowsRead.clear();
    },
  };
}
