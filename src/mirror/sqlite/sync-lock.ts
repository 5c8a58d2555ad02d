import Database from 'better-sqlite3';

/**
 * The sync lock of a SQLite mirror: SQLite's exclusive lock on a small file beside it
 * (`<mirror>-wsmirror-sync.lock`), taken at once and kept until the connection closes. The OS
 * drops it when the process dies, even by kill -9, so a lock is never left behind; the file
 * itself may stay and means nothing alone. Readers and SQL clients never touch it.
 */
export interface SqliteSyncLock {
  release(): void;
}

export function syncLockFile(mirrorPath: string): string {
  return `${mirrorPath}-wsmirror-sync.lock`;
}

/** Takes the lock; undefined when another process holds it. */
export function takeSqliteSyncLock(mirrorPath: string): SqliteSyncLock | undefined {
  // A short wait covers a previous holder still closing; then the lock is someone else's.
  const db = new Database(syncLockFile(mirrorPath), { timeout: 500 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
  return { release: () => db.close() };
}
