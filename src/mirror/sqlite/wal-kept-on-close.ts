import Database from 'better-sqlite3';
import type { MirrorFileWatch } from './mirror-file-watch.ts';

/**
 * Closes a mirror connection leaving the -wal (empty) and -shm files in place. SQLite's last
 * connection to a WAL file checkpoints and deletes them on close, and a reader that may not
 * create files in the directory (a BI user of the daemon's group, opening the file read-only)
 * can read a WAL file only while they exist: with them gone, every read failed with "attempt to
 * write a readonly database" whenever wsmirror was stopped. better-sqlite3 exposes neither
 * SQLITE_FCNTL_PERSIST_WAL nor SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, so SQLite's own rule does it:
 * a connection that closes while another has the file open deletes nothing, and a read-only
 * connection never does. Before that the -wal is written back into the file and truncated, not
 * waiting for readers of older snapshots (what they hold stays in the -wal, which SQLite reads).
 *
 * Only for a file still at its path: one moved or replaced is closed as it is (mirror-file-watch.ts).
 */
export async function closeKeepingWal(raw: Database.Database, watch: MirrorFileWatch | undefined, close: () => Promise<void>): Promise<void> {
  const holder = raw.open && !raw.readonly && watch?.inPlace() === true ? readOnlyHolder(raw) : undefined;
  try {
    await close();
  } finally {
    holder?.close();
  }
}

/** A read-only connection holding the file open (a read takes SQLite's shared lock, kept in WAL mode); undefined when it cannot. */
function readOnlyHolder(raw: Database.Database): Database.Database | undefined {
  try {
    raw.pragma('busy_timeout = 0');
    raw.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // A checkpoint refused (the disk full, say) leaves the -wal as it is: SQLite reads it.
  }
  let holder: Database.Database | undefined;
  try {
    holder = new Database(raw.name, { readonly: true, fileMustExist: true });
    holder.prepare('SELECT count(*) FROM sqlite_schema').get();
    return holder;
  } catch {
    holder?.close();
    return undefined;
  }
}
