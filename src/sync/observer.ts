import type { OutboxStatus } from '../mirror/index.ts';

/**
 * What the engine reports while it works; the daemon turns it into metrics, progress lines and
 * logs. Every method is optional, so tests and one-off commands can pass nothing.
 */
export interface SyncObserver {
  rowsApplied?(table: string, operation: 'upsert' | 'delete', count: number): void;
  /** Progress of a backfill or full scan: `rows` more were read. */
  scanProgress?(table: string, rows: number): void;
  scanFinished?(table: string): void;
  tablePulled?(table: string, at: Date): void;
  /** The table is done for this cycle: pulled, or skipped because nothing was due. */
  tableFinished?(table: string): void;
  /** Once a cycle, after the push: outbox entries by status, and when the oldest pending one was made. */
  outboxChecked?(counts: Readonly<Record<OutboxStatus, number>>, oldestPendingAt: string | null): void;
  /** Once a cycle, after the schema pull: every table the mirror now holds. */
  tablesMirrored?(tables: readonly string[]): void;
}

/** pino-compatible subset. */
export interface SyncLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: SyncLogger = { debug() {}, info() {}, warn() {}, error() {} };
