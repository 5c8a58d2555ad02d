import { statSync } from 'node:fs';
import { walFileOf } from './mirror-path.ts';

/**
 * The size of a SQLite mirror's -wal file in bytes; 0 when there is none (no connection open, or
 * the last one closed cleanly). It grows while a reader keeps a read transaction open, since
 * SQLite cannot start the log over meanwhile (docs/operations.md, "Files of a SQLite mirror").
 */
export function sqliteWalBytes(mirrorPath: string): number {
  return statSync(walFileOf(mirrorPath), { throwIfNoEntry: false })?.size ?? 0;
}
