import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { quoteIdent } from '../sql-text.ts';
import { fileIdentity, stillSameFile, type FileIdentity } from './file-identity.ts';
import { mirrorFileGone, walFileGone, type WriteBack } from './gone-file-report.ts';
import { walFileOf } from './mirror-path.ts';
import { openFileLocation } from './open-file-location.ts';

/**
 * Whether a SQLite mirror file, and the -wal beside it, are still at their paths while the
 * connection has them open; and, the first time either is not, what becomes of what it holds.
 */
export class MirrorFileWatch {
  /**
   * The file opened (SQLite creates a new one at once), to tell when its path names another:
   * through a symbolic link, as SQLite followed it, so a link pointed elsewhere names another file.
   */
  readonly path: string;
  readonly #identity: FileIdentity;
  /**
   * The -wal file SQLite opened beside the file (the one a link points to), which the connection
   * keeps open until it closes: taken once it exists, at the end of the open or at the first check.
   */
  readonly #wal: { path: string; identity: FileIdentity | undefined };
  /** Why the mirror is no longer at its place, once that was found (and its -wal written back). */
  #gone: string | undefined;

  /** The watch of a connection's file; undefined for an in-memory database. */
  static of(raw: Database.Database): MirrorFileWatch | undefined {
    if (raw.memory) return undefined;
    const path = resolve(raw.name);
    const identity = fileIdentity(path);
    return identity === undefined ? undefined : new MirrorFileWatch(path, identity);
  }

  private constructor(path: string, identity: FileIdentity) {
    this.path = path;
    this.#identity = identity;
    this.#wal = { path: walFileOf(path), identity: undefined };
  }

  /** Whether the file, and its -wal once made, are still at their paths (two stats), and were never found gone. */
  inPlace(): boolean {
    if (this.#gone !== undefined || !stillSameFile(this.path, this.#identity)) return false;
    return this.#wal.identity === undefined || stillSameFile(this.#wal.path, this.#wal.identity, 'own');
  }

  /** Takes the identity of the -wal file, once SQLite has made it. */
  noteWalFile(): void {
    if (this.#wal.identity === undefined) this.#wal.identity = fileIdentity(this.#wal.path, 'own');
  }

  /**
   * Once the file or its -wal is found gone, first writes every committed write the connection's
   * -wal holds into the file the connection has open, wherever that is now: SQLite would not on
   * close. Its close checkpoints and deletes the -wal and -shm only by path, and never for a file
   * that moved (SQLITE_FCNTL_HAS_MOVED), so they would stay at the old path, where SQLite discards
   * them once a new mirror is made there, or plays them into whatever file was put there.
   * TRUNCATE leaves that -wal empty. `locked` runs it under the connection's lock: no transaction
   * of this process is open meanwhile.
   */
  async gone(raw: Database.Database, locked: <T>(fn: () => Promise<T>) => Promise<T>): Promise<string | undefined> {
    if (this.#gone !== undefined) return this.#gone;
    const fileGone = !stillSameFile(this.path, this.#identity);
    this.noteWalFile();
    const walIdentity = this.#wal.identity;
    const walGone = walIdentity !== undefined && !stillSameFile(this.#wal.path, walIdentity, 'own');
    if (!fileGone && !walGone) return undefined;
    this.#gone = await locked(async () => {
      const gone = { path: this.path, wal: this.#wal.path, writeBack: writeBack(raw), waitingEdits: waitingEdits(raw) };
      return fileGone ? mirrorFileGone(gone, openFileLocation(this.#identity)) : walFileGone(gone);
    });
    return this.#gone;
  }
}

/** A TRUNCATE checkpoint: waits up to busy_timeout for readers of older snapshots, then does what it can. */
function writeBack(raw: Database.Database): WriteBack {
  try {
    const [result] = raw.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    return { complete: result !== undefined && result.busy === 0 && result.log === result.checkpointed };
  } catch (error) {
    return { complete: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function waitingEdits(raw: Database.Database): number | undefined {
  try {
    return Number((raw.prepare(`SELECT count(*) AS n FROM ${quoteIdent('_wsmirror_outbox')}`).get() as { n: number }).n);
  } catch {
    return undefined;
  }
}
