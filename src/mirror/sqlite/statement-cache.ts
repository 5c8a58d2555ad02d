import type Database from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

export type Statement = Database.Statement<unknown[], unknown>;

/** Statements kept at most; past it the cache starts over (schema changes make new texts). */
const MAX_STATEMENTS = 500;

/**
 * Prepared statements of one connection by SQL text, compiled once. Kysely's SQLite driver
 * prepares every query it runs, and a pull runs the same few catalog queries (outbox probe,
 * cursor upsert) in each of its write transactions; the row deletes share the cache too, the row
 * upserts do not (upsert-statements.ts: each holds its table's capture triggers, 7–12 KiB per
 * column, where what this keeps takes 2–5 KiB). SQLite recompiles a kept statement by itself after
 * a schema change.
 */
export class StatementCache {
  readonly #raw: Database.Database;
  readonly #statements = new Map<string, Statement>();

  constructor(raw: Database.Database) {
    this.#raw = raw;
  }

  prepare(text: string): Statement {
    let stmt = this.#statements.get(text);
    // A statement still being iterated (a stream) cannot run again until it is done.
    if (stmt && !stmt.busy) return stmt;
    stmt = this.#raw.prepare(text);
    if (this.#statements.size >= MAX_STATEMENTS) this.#statements.clear();
    this.#statements.set(text, stmt);
    return stmt;
  }

  clear(): void {
    this.#statements.clear();
  }

  /** The connection as Kysely's SQLite dialect takes it, preparing through this cache. */
  asKyselyDatabase(): SqliteDatabase {
    return {
      prepare: (text: string) => this.prepare(text) as unknown as ReturnType<SqliteDatabase['prepare']>,
      close: () => {
        this.clear();
        this.#raw.close();
      },
    };
  }
}
