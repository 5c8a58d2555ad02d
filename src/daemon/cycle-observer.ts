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
  /**
   * How many rows a scan of the table will read, when that can be known; gives the progress its
   * share done and ETA. A backfill brings its own estimate (`scanStarted`); for a rescan, the
   * rows the mirror already holds.
   */
  expectedRows?: (table: string) => Promise<number | undefined>;
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
      if (!deps.progress) return;
      let task = tasks.get(table);
      if (!task) {
        const started = deps.progress.task(table);
        tasks.set(table, (task = started));
        deps.expectedRows?.(table).then((total) => started.setTotal(total), () => {});
      }
      task.add(rows);
    },
    scanFinished: (table) => {
      tasks.get(table)?.done();
      tasks.delete(table);
    },
    scanStarted: (table, started) => {
      if (!deps.progress) return;
      const task = deps.progress.task(table);
      tasks.set(table, task);
      // A backfill estimates its table's records; a rescan expects the rows the mirror holds. A
      // resumed one shows what its earlier runs read: the percentage is of the whole table.
      if (started.estimatedRows !== null) task.setTotal(started.estimatedRows);
      else deps.expectedRows?.(table).then((total) => task.setTotal(total), () => {});
      task.add(started.rowsRead);
    },
    tablePulled: (table, currentAsOf) => deps.metrics?.setTableCurrentAsOf(table, currentAsOf),
    tableFinished: (table) => {
      pulled.add(table);
    },
    tablesMirrored: (mirrored) => {
      tables = mirrored.map((t) => t.table);
      deps.metrics?.setTables(mirrored);
    },
    outboxChecked: (counts, oldestPendingAt) => {
      deps.metrics?.setOutboxDepth(counts);
      deps.metrics?.setOldestPendingEdit(oldestPendingAt);
    },
    tally: () => ({ tables, pulled, rowsRead }),
    reset: () => {
      pulled.clear();
      rowsRead.clear();
    },
  };
}
