import type Database from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export type Statement = Database.Statement<unknown[], unknown>;

/** Statements kept at most; past it the cache starts over (schema changes make new texts). */
const MAX_STATEMENTS = 500;

/** DDL: it returns no rows, and its text seldom runs twice. */
const SCHEMA_STATEMENT = /^\s*(CREATE|DROP|ALTER)\s/i;

/**
 * Prepared statements of one connection by SQL text, compiled once. Kysely's SQLite driver
 * prepares every query it runs, and a pull runs the same few catalog queries (outbox probe,
 * cursor upsert) in each of its write transactions; the row deletes share the cache too, the row
 * upserts do not (upsert-statements.ts: each holds its table's capture triggers, 17–23 KiB per
 * column, where what this keeps takes 2–5 KiB). SQLite recompiles a kept statement by itself after
 * a schema change.
 *
 * DDL is not prepared at all but run at once (`exec`, which finalizes it): better-sqlite3 frees a
 * statement only when V8 collects its object, and the DDL of a schema change (each table's capture
 * triggers dropped and created, its view, its columns) is thousands of texts for a large
 * workspace that never run again. Kept or waiting for the collector, they held about 20 MiB at
 * the end of the schema step of a first sync of 300 tables (bench/README.md, "memory").
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

  /**
   * A statement Kysely runs once, as `exec` runs it: no statement object outlives it. One given
   * parameters (SQLite takes them in `CREATE TABLE … AS SELECT` alone) is prepared for them.
   */
  #runOnce(text: string): SqliteStatement {
    const raw = this.#raw;
    const run = (parameters: readonly unknown[] = []) => {
      if (parameters.length > 0) return raw.prepare(text).run(...parameters);
      raw.exec(text);
      return { changes: 0, lastInsertRowid: 0 };
    };
    return {
      reader: false,
      run,
      all: (parameters) => {
        run(parameters);
        return [];
      },
      iterate: (parameters) => {
        run(parameters);
        return [][Symbol.iterator]();
      },
    };
  }

  /** The connection as Kysely's SQLite dialect takes it, preparing through this cache. */
  asKyselyDatabase(): SqliteDatabase {
    return {
      prepare: (text: string) => (SCHEMA_STATEMENT.test(text) ? this.#runOnce(text) : this.prepare(text) as unknown as SqliteStatement),
      close: () => {
        this.clear();
        this.#raw.close();
      },
    };
  }
}
