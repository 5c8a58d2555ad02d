import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ConfigError } from '../../errors.ts';
import { explainAccessFailure } from './access-problems.ts';
import type { SyncLock, SyncLockHeld } from '../dialect.ts';
import type { MirrorLogger } from '../mirror-logger.ts';
import type { MirrorLocation } from '../mirror-url.ts';
import { fileIdentity, stillSameFile, type FileIdentity } from './file-identity.ts';
import { lockHolder } from './lock-holder.ts';
import { resolvedMirrorPath } from './mirror-path.ts';

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
 *
 * The lock file is beside the file the mirror path names once its symbolic links are followed
 * (mirror-path.ts), so that a process naming the mirror through a link and one naming its file
 * take the same lock. The lock file itself is never followed: SQLite would create, write and lock
 * whatever a link there points to, so a link is refused (and one put there later is a replaced
 * lock file, which `confirm` refuses in turn).
 */
export function syncLockFile(mirrorPath: string): string {
  return `${resolvedMirrorPath(mirrorPath)}-wsmirror-sync.lock`;
}

type SqliteLocation = Extract<MirrorLocation, { dialect: 'sqlite' }>;

/** Takes the lock, or says who holds it. `logger` hears of a lock file replaced. */
export function takeSqliteSyncLock(location: SqliteLocation, logger?: MirrorLogger): SyncLock | SyncLockHeld {
  const file = syncLockFile(location.path);
  const first = lockFile(location, file);
  if ('heldBy' in first) return first;
  let held: Held | undefined = first;
  return {
    confirm() {
      if (held === undefined) return false;
      if (stillSameFile(file, held.identity, 'own')) return true;
      logger?.warn({ file }, `the sync lock file ${file} was deleted or replaced; taking the lock again`);
      held.db.close();
      const again = lockFile(location, file);
      held = 'heldBy' in again ? undefined : again;
      if (held === undefined) return false;
      logger?.warn({ file }, `took the sync lock of the mirror ${location.display} again, on a new lock file`);
      return true;
    },
    release: () => {
      held?.db.close();
    },
  };
}

/**
 * Whether a wsmirror process (a `run` or `sync`) holds the sync lock of the mirror at `mirrorPath`
 * now, and which, without taking it (`wsmirror status`): a read of the lock file, opened
 * read-only, is refused at once while its holder keeps SQLite's exclusive lock on it. The read's
 * own shared lock lasts a moment, and a process taking the lock meanwhile waits for it (500 ms).
 * Null when none holds it, or when that cannot be told (no lock file, one this user cannot read).
 */
export function sqliteSyncLockHolder(mirrorPath: string): SyncLockHeld | null {
  const file = syncLockFile(mirrorPath);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return null;
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return null;
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') return null;
    const identity = fileIdentity(file, 'own');
    return { heldBy: identity === undefined ? undefined : lockHolder(identity) };
  } finally {
    db.close();
  }
}

interface Held {
  db: Database.Database;
  identity: FileIdentity;
}

/** Locks `file` (creating it), or says who holds it. */
function lockFile(location: SqliteLocation, file: string): Held | SyncLockHeld {
  const failed = (error: unknown) =>
    new ConfigError(`cannot open the SQLite mirror ${location.display}: its sync lock file ${file}: ${explainAccessFailure(location.path, error)}`, { cause: error });
  const identity = ownLockFile(location, file, failed);
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
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return { heldBy: lockHolder(identity) };
    throw failed(error);
  }
  // SQLite opened the file by its name: it must still be the one made or found above.
  if (!stillSameFile(file, identity, 'own')) {
    db.close();
    if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true) throw symlinkRefused(location, file);
    // Deleted or replaced again before it was locked: locked, but excluding nobody.
    return { heldBy: undefined };
  }
  return { db, identity };
}

/**
 * Makes or finds the lock file without following a link at its path (O_NOFOLLOW), and identifies
 * it. The descriptor is closed before SQLite locks the file: closing any descriptor of a file
 * drops the process's POSIX locks on it, SQLite's included.
 */
function ownLockFile(location: SqliteLocation, file: string, failed: (error: unknown) => ConfigError): FileIdentity {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink() === true) throw symlinkRefused(location, file);
    throw failed(error);
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) {
      throw new ConfigError(`cannot open the SQLite mirror ${location.display}: its sync lock file ${file} is not a regular file; remove it (wsmirror makes it anew)`);
    }
    return { dev: stats.dev, ino: stats.ino };
  } finally {
    closeSync(fd);
  }
}

function symlinkRefused(location: SqliteLocation, file: string): ConfigError {
  let target = '';
  try {
    target = ` (to ${readlinkSync(file)})`;
  } catch {
    // Gone meanwhile: the message names the path alone.
  }
  return new ConfigError(
    `cannot open the SQLite mirror ${location.display}: its sync lock file ${file} is a symbolic link${target}; wsmirror does not follow a link `
      + 'there (it would create, write and lock the file the link points to): remove the link, and wsmirror makes the lock file anew',
  );
}
