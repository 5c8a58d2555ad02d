import type { Statement } from 'better-sqlite3';
import type { Db } from './db.ts';
import type { FieldPlan } from './record-plans.ts';
import type { TableRow } from './schema-rows.ts';
import { recordsIndexName, uniqueIndexName } from './table-indexes.ts';

/**
 * The SQL side of the records store: prepared statements over `records`, kept per database, and
 * the per-table partial indexes made on first use. Separate so that the writes, the checks and the
 * list share one statement cache.
 */

interface Statements {
  update: Statement;
  remove: Statement;
  rowsIn: Statement;
  idsIn: Statement;
  rowById: Statement;
  dynamic: Map<string, Statement>;
}

const statementsByDb = new WeakMap<Db, Statements>();

export function recordStatements(db: Db): Statements {
  let st = statementsByDb.get(db);
  if (!st) {
    st = {
      update: db.prepare('UPDATE records SET data = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM records WHERE id = ?'),
      rowsIn: db.prepare('SELECT id, data FROM records WHERE table_id = ? AND id IN (SELECT value FROM json_each(?))'),
      idsIn: db.prepare('SELECT id FROM records WHERE table_id = ? AND id IN (SELECT value FROM json_each(?))'),
      rowById: db.prepare('SELECT data FROM records WHERE id = ?'),
      dynamic: new Map(),
    };
    statementsByDb.set(db, st);
  }
  return st;
}

/** Statements whose text depends on the request (filters, sort, per-field paths), kept by text. */
export function dynamicStatement(db: Db, sql: string): Statement {
  const st = recordStatements(db);
  let stmt = st.dynamic.get(sql);
  if (!stmt) {
    if (st.dynamic.size >= 500) st.dynamic.clear();
    stmt = db.prepare(sql);
    st.dynamic.set(sql, stmt);
  }
  return stmt;
}

/**
 * Partial indexes are created on first use. The statement is a no-op once the index exists; a
 * writer runs it once per request or import (RecordWriter), and a list once per request, so an
 * index whose creation was rolled back with a failed request is simply made again by the next.
 * Deleting their table or field drops them (table-indexes.ts).
 */
function ensureIndex(db: Db, name: string, definition: string): void {
  dynamicStatement(db, `CREATE INDEX IF NOT EXISTS "${name}" ON ${definition}`).run();
}

/**
 * An expression index per unique field keeps the check fast on large tables. Queries name it
 * (`INDEXED BY`): without statistics SQLite prefers the (table_id, id) index and reads every
 * record of the table for each look-up.
 */
export function ensureUniqueIndex(db: Db, table: TableRow, plan: FieldPlan): string {
  const name = uniqueIndexName(table.key, plan.field.id);
  ensureIndex(db, name, `records (json_extract(data, '${plan.path}')) WHERE table_id = ${table.key}`);
  return name;
}

/**
 * Each table's records get a partial index on id: walking it for a deep OFFSET is about three
 * times faster than walking the shared (table_id, id) index, which compares the key on every row.
 */
export function pageIndex(db: Db, tableKey: number): string {
  const name = recordsIndexName(tableKey);
  ensureIndex(db, name, `records (id) WHERE table_id = ${tableKey}`);
  return name;
}
