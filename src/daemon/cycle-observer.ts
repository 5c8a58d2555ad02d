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
  /** Tables whose records were pulled in the running (or last) cycle. */
  readonly pulled: ReadonlySet<string>;
  /** Tables being scanned now, with the rows read so far. */
  readonly scanning: ReadonlyMap<string, number>;
}

export interface CycleObserver extends SyncObserver {
  tally(): CycleTally;
  /** Forgets the last cycle's tally: called when a cycle begins. */
  reset(): void;
}

export function createCycleObserver(deps: { metrics?: Metrics; progress?: ProgressReporter }): CycleObserver {
  const tasks = new Map<string, ProgressTask>();
  const scanning = new Map<string, number>();
  const pulled = new Set<string>();
  let tables: readonly string[] = [];
  return {
    rowsApplied: (table, operation, count) => deps.metrics?.observeRowsApplied(table, operation, count),
    scanProgress: (table, rows) => {
      scanning.set(table, (scanning.get(table) ?? 0) + rows);
      if (!deps.progress) return;
      let task = tasks.get(table);
      if (!task) tasks.set(table, (task = deps.progress.task(table)));
      task.add(rows);
    },
    scanFinished: (table) => {
      scanning.delete(table);
      tasks.get(table)?.done();
      tasks.delete(table);
    },
    scanStarted: (table, { rowsRead, estimatedRows }) => {
      scanning.set(table, rowsRead);
      if (!deps.progress) return;
      const task = deps.progress.task(table);
      tasks.set(table, task);
      if (estimatedRows !== null) task.setTotal(estimatedRows);
      task.add(rowsRead);
    },
    tablePulled: (table, currentAsOf) => {
      pulled.add(table);
      deps.metrics?.setTableCurrentAsOf(table, currentAsOf);
    },
    tablesMirrored: (mirrored) => {
      tables = mirrored.map((t) => t.table);
      deps.metrics?.setTables(mirrored);
    },
    outboxChecked: (counts, oldestPendingAt) => {
      deps.metrics?.setOutboxDepth(counts);
      deps.metrics?.setOldestPendingEdit(oldestPendingAt);
    },
    tally: () => ({ tables, pulled, scanning }),
    reset: () => {
      pulled.clear();
      scanning.clear();
    },
  };
}
