import type { OutboxStatus, TableMode } from '../mirror/index.ts';

/**
 * What the engine reports while it works; the daemon turns it into metrics, progress lines and
 * logs. Every method is optional, so tests and one-off commands can pass nothing.
 */
export interface SyncObserver {
  rowsApplied?(table: string, operation: 'upsert' | 'delete', count: number): void;
  /**
   * A backfill or full scan begins, or resumes with `rowsRead` rows already read; `estimatedRows`
   * is the table's size as estimated when it first began (backfills only; null otherwise).
   */
  scanStarted?(table: string, progress: { rowsRead: number; estimatedRows: number | null }): void;
  /** Progress of a backfill or full scan: `rows` more were read. */
  scanProgress?(table: string, rows: number): void;
  scanFinished?(table: string): void;
  /** A table's pull committed: it holds upstream as of `currentAsOf` (see table-lag.ts). */
  tablePulled?(table: string, currentAsOf: Date): void;
  /**
   * A committed pull was undone (schema-recheck.ts): the table is current as of its pull before
   * again (null: it has had none), which ended at `lastPullAt`.
   */
  tablePullUndone?(table: string, before: { currentAsOf: Date | null; lastPullAt: Date | null }): void;
  /** The table is done for this cycle: pulled, or skipped because nothing was due. */
  tableFinished?(table: string): void;
  /**
   * Before the push of every cycle, and after it when it changed the outbox or failed: outbox
   * entries by status, when the oldest pending one was made, and how many of the pending wait
   * for a row inserted here to be created upstream.
   */
  outboxChecked?(counts: Readonly<Record<OutboxStatus, number>>, oldestPendingAt: string | null, waiting: number): void;
  /**
   * Once a cycle, after the schema pull: every table the mirror now holds, with the upstream
   * time each is current as of (null before its first pull), so lag is known for every table
   * from the first cycle of a process, including full-scan tables between two scans.
   */
  tablesMirrored?(tables: readonly { table: string; mode: TableMode; currentAsOf: Date | null; lastPullAt: Date | null }[]): void;
}

/** pino-compatible subset. */
export interface SyncLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: SyncLogger = { debug() {}, info() {}, warn() {}, error() {} };
