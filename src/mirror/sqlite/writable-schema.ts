import type Database from 'better-sqlite3';

/**
 * `sqlite_schema` made writable, for the few edits SQLite's DDL cannot make, or makes too slowly.
 * `close` moves the schema version on, so that every connection (this one at its next statement)
 * loads the schema again from the rows left. Used inside a write transaction, so that a row
 * SQLite then fails to load can be rolled back.
 */
export class WritableSchema {
  readonly #raw: Database.Database;
  readonly #version: number;

  constructor(raw: Database.Database) {
    this.#raw = raw;
    this.#version = raw.pragma('schema_version', { simple: true }) as number;
    raw.unsafeMode(true);
    try {
      raw.pragma('writable_schema = ON');
    } catch (error) {
      raw.unsafeMode(false);
      throw error;
    }
  }

  /** Ends the edit; `changed`: the rows were written as meant, and the schema is to be loaded again. */
  close(changed: boolean): void {
    try {
      if (changed) this.#raw.pragma(`schema_version = ${this.#version + 1}`);
    } finally {
      this.#raw.pragma('writable_schema = OFF');
      this.#raw.unsafeMode(false);
    }
  }
}

/** Runs `write` with `sqlite_schema` writable (WritableSchema). */
export function withWritableSchema(raw: Database.Database, write: () => void): void {
  const schema = new WritableSchema(raw);
  let written = false;
  try {
    write();
    written = true;
  } finally {
    schema.close(written);
  }
}
