import type Database from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { WriteTx } from '../dialect-driver.ts';
import { MirrorError } from '../errors.ts';
import { quoteIdent } from '../sql-text.ts';
import { explainDiskFull } from './disk-full.ts';
import type { Statement } from './statement-cache.ts';
import { WRITER_TABLE } from './writer-marker.ts';

/** How long a write waits for another connection's write transaction to end. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * The daemon's write transactions on a SQLite mirror: under Kysely's connection lock (nothing of
 * this process interleaves), BEGIN IMMEDIATE, the writer marker (writer-marker.ts) unless
 * unmarked, the transaction's statements, those it gave for COMMIT, then COMMIT; a rollback and
 * a message naming the file on failure. The statements run on the raw connection, prepared once:
 * every batch of a pull is one such transaction.
 */
export class WriteTransactions {
  readonly #raw: Database.Database;
  readonly #db: Kysely<CatalogDb>;
  /** The mirror's path now, for a disk-full message (the file may have been moved). */
  readonly #path: () => string;
  #txStatements: Record<'begin' | 'commit', Statement> | undefined;
  #markStatements: Record<'mark' | 'unmark', Statement> | undefined;

  constructor(raw: Database.Database, db: Kysely<CatalogDb>, path: () => string) {
    this.#raw = raw;
    this.#db = db;
    this.#path = path;
  }

  async write<T>(fn: (tx: WriteTx) => Promise<T>, marked: boolean): Promise<T> {
    return this.#db.connection().execute(async (conn) => {
      // IMMEDIATE takes the write lock up front (waiting up to busy_timeout for other writers)
      // instead of failing halfway when a read transaction cannot be upgraded.
      const tx = this.#transaction;
      try {
        tx.begin.run();
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
        throw new MirrorError(
          `the SQLite mirror ${this.#raw.name} is locked: another connection has held a write transaction on it for over `
            + `${BUSY_TIMEOUT_MS / 1000} s (a BEGIN left open in sqlite3 or an application?); wsmirror writes once it commits or rolls back`,
          { cause: error },
        );
      }
      try {
        if (marked) this.#marker.mark.run();
        const last: CompiledQuery[] = [];
        const result = await fn({ db: conn, atCommit: (queries) => last.push(...queries) });
        for (const query of last) await conn.executeQuery(query);
        if (marked) this.#marker.unmark.run();
        tx.commit.run();
        return result;
      } catch (error) {
        if (this.#raw.inTransaction) this.#raw.exec('ROLLBACK');
        const full = explainDiskFull(this.#path(), error);
        throw full === undefined ? error : new MirrorError(full, { cause: error });
      }
    });
  }

  /** The statements of every write transaction, prepared on first use. */
  get #transaction(): Record<'begin' | 'commit', Statement> {
    this.#txStatements ??= { begin: this.#raw.prepare('BEGIN IMMEDIATE'), commit: this.#raw.prepare('COMMIT') };
    return this.#txStatements;
  }

  /** The marking of the daemon's own transactions (writer-marker.ts), prepared once the catalog exists. */
  get #marker(): Record<'mark' | 'unmark', Statement> {
    this.#markStatements ??= {
      mark: this.#raw.prepare(`INSERT INTO ${quoteIdent(WRITER_TABLE)} ("marker") VALUES (1)`),
      unmark: this.#raw.prepare(`DELETE FROM ${quoteIdent(WRITER_TABLE)}`),
    };
    return this.#markStatements;
  }
}
