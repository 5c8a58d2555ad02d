import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.ts';
import { explainAccessFailure } from './access-problems.ts';
import type { SyncLock } from '../dialect.ts';
import type { MirrorLogger } from '../mirror-logger.ts';
import type { MirrorLocation } from '../mirror-url.ts';
import { fileIdentity, stillSameFile, type FileIdentity } from './file-identity.ts';

/**
 * The sync lock of a SQLite mirror: SQLite's exclusive lock on a small file beside it
 * (`<mirror>-wsmirror-sync.lock`), taken at once and kept until the connection closes. The OS
 * drops it when the process dies, even by kill -9, so a lock is never left behind; the file
 * itself may stay and means nothing alone. Readers and SQL clients never touch it. It needs
 * only the directory, so it is taken before the mirror file is created or opened.
 *
 * A lock on a file deleted (or replaced) under the process still holds, but no longer excludes
 * anyone: a second process would lock a new file of that name. `confirm` (before each cycle and
 * its push) notices, with one stat, and locks the file now at that path.
 */
export function syncLockFile(mirrorPath: string): string {
  return `${mirrorPath}-wsmirror-sync.lock`;
}

type SqliteLocation = Extract<MirrorLocation, { dialect: 'sqlite' }>;

/** Takes the lock; undefined when another process holds it. `logger` hears of a lock file replaced. */
export function takeSqliteSyncLock(location: SqliteLocation, logger?: MirrorLogger): SyncLock | undefined {
  const file = syncLockFile(location.path);
  let held = lockFile(location, file);
  if (held === undefined) return undefined;
  return {
    confirm() {
      if (held === undefined) return false;
      if (stillSameFile(file, held.identity)) return true;
      logger?.warn({ file }, `the sync lock file ${file} was deleted or replaced; taking the lock again`);
      held.db.close();
      held = lockFile(location, file);
      if (held === undefined) return false;
      logger?.warn({ file }, `took the sync lock of the mirror ${location.display} again, on a new lock file`);
      return true;
    },
    release: () => {
      held?.db.close();
    },
  };
}

/** Locks `file` (creating it); undefined when another process holds it. */
function lockFile(location: SqliteLocation, file: string): { db: Database.Database; identity: FileIdentity } | undefined {
  const failed = (error: unknown) =>
    new ConfigError(`cannot open the SQLite mirror ${location.display}: its sync lock file ${file}: ${explainAccessFailure(location.path, error)}`, { cause: error });
  let db: Database.Database;
  try {
    // A short wait covers a previous holder still closing; then the lock is someone else's.
    db = new Database(file, { timeout: 500 });
  } catch (error) {
    throw failed(error);
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw failed(error);
  }
  const identity = fileIdentity(file);
  if (identity === undefined) {
    // Deleted again before it could be identified: locked, but excluding nobody.
    db.close();
    return undefined;
  }
  return { db, identity };
}
