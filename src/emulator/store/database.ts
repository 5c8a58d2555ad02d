import Database from 'better-sqlite3';
import { bumpSchemaGeneration } from './schema-generation.ts';
import { dropTableIndexes } from './table-indexes.ts';
import type { Db } from './db.ts';

/**
 * The emulator's state: one SQLite database (in memory by default), so every batch is a real
 * transaction and a million-record workspace stays fast. Schema objects have integer keys
 * internally and prefixed string ids in the API (see ids.ts). Record values are a JSON object
 * keyed by field id, so renaming a field never rewrites records.
 */
const DDL = `
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sequences (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS modules (
  id    INTEGER PRIMARY KEY AUTOINCREMENT,
  name  TEXT NOT NULL UNIQUE,
  props TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tables (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  module_id INTEGER NOT NULL REFERENCES modules(id) ON DELETE CASCADE,
  name      TEXT NOT NULL,
  props     TEXT NOT NULL,
  UNIQUE (module_id, name)
);
CREATE TABLE IF NOT EXISTS fields (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  table_id INTEGER NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
  name     TEXT NOT NULL,
  type     TEXT NOT NULL,
  position INTEGER NOT NULL,
  props    TEXT NOT NULL,
  UNIQUE (table_id, name)
);
CREATE TABLE IF NOT EXISTS records (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  table_id INTEGER NOT NULL,
  data     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_table ON records (table_id, id);
CREATE TABLE IF NOT EXISTS record_changes (
  seq         INTEGER PRIMARY KEY,
  table_id    INTEGER NOT NULL,
  record_id   INTEGER NOT NULL,
  change_type TEXT NOT NULL,
  changed_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS record_changes_window ON record_changes (table_id, changed_at, seq);
CREATE TABLE IF NOT EXISTS schema_changes (
  seq        INTEGER PRIMARY KEY,
  object_id  TEXT NOT NULL,
  kind       TEXT NOT NULL,
  action     TEXT NOT NULL,
  changed_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS schema_changes_window ON schema_changes (changed_at, seq);
`;


/**
 * Opens the store. A data file belongs to one emulator at a time: the connection takes SQLite's
 * exclusive lock at once and keeps it until it closes (the OS drops it when the process dies,
 * even by kill -9). A second emulator on the file is refused here, naming it, instead of both
 * serving and the second failing its writes.
 */
export function openDatabase(file: string | undefined): Db {
  const onDisk = file !== undefined && file !== ':memory:';
  // A short wait covers a previous holder still closing; then the file is someone else's.
  const db = new Database(file ?? ':memory:', { timeout: 1000 });
  if (onDisk) {
    try {
      // Before WAL, so the WAL index lives in this process's memory (no -shm file to share).
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new Error(`--data ${file}: the file is in use by another emulator (or another program holds a lock on it)`, { cause: error });
      }
      throw error;
    }
  }
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -262144'); // 256 MiB page cache: a million records fit.
  db.exec(DDL);
  return db;
}

/** Empties every table (the admin reset); sequences restart so ids are predictable again. */
export function clearDatabase(db: Db): void {
  bumpSchemaGeneration(db);
  db.transaction(() => {
    dropTableIndexes(db, 'every table');
    for (const t of ['record_changes', 'schema_changes', 'records', 'fields', 'tables', 'modules', 'sequences', 'meta']) {
      db.prepare(`DELETE FROM ${t}`).run();
    }
    db.prepare(`DELETE FROM sqlite_sequence`).run();
  })();
}

/** Next value of a named sequence (option ids). Call inside the caller's transaction. */
export function nextSequenceValue(db: Db, name: string): number {
  const row = db
    .prepare(
      `INSERT INTO sequences (name, value) VALUES (?, 1)
       ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value`,
    )
    .get(name) as { value: number };
  return row.value;
}
