import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.ts';
import { explainAccessFailure } from './access-problems.ts';
import type { SyncLock } from '../dialect.ts';
import type { MirrorLocation } from '../mirror-url.ts';

/**
 * The sync lock of a SQLite mirror: SQLite's exclusive lock on a small file beside it
 * (`<mirror>-wsmirror-sync.lock`), taken at once and kept until the connection closes. The OS
 * drops it when the process dies, even by kill -9, so a lock is never left behind; the file
 * itself may stay and means nothing alone. Readers and SQL clients never touch it. It needs
 * only the directory, so it is taken before the mirror file is created or opened.
 */
export function syncLockFile(mirrorPath: string): string {
  return `${mirrorPath}-wsmirror-sync.lock`;
}

/** Takes the lock; undefined when another process holds it. */
export function takeSqliteSyncLock(location: Extract<MirrorLocation, { dialect: 'sqlite' }>): SyncLock | undefined {
  const file = syncLockFile(location.path);
  let db: Database.Database;
  try {
    // A short wait covers a previous holder still closing; then the lock is someone else's.
    db = new Database(file, { timeout: 500 });
  } catch (error) {
    throw new ConfigError(`cannot open the SQLite mirror ${location.display}: its sync lock file ${file}: ${explainAccessFailure(location.path, error)}`, { cause: error });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw new ConfigError(`cannot open the SQLite mirror ${location.display}: its sync lock file ${file}: ${explainAccessFailure(location.path, error)}`, { cause: error });
  }
  return {
    // The OS keeps a file lock for as long as the process lives.
    confirm: () => true,
    release: () => {
      db.close();
    },
  };
}
