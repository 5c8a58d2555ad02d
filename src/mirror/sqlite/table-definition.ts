import type Database from 'better-sqlite3';
import { MirrorError } from '../errors.ts';
import { quoteIdent } from '../sql-text.ts';
import { withWritableSchema } from './writable-schema.ts';

/**
 * SQLite keeps each table's definition as its CREATE statement, and cannot alter a column's
 * constraints: these edit that statement in place (writable_schema), for a change the rows
 * already meet (a NOT NULL dropped, a CHECK restated), then check the table's integrity. Run
 * inside a write transaction.
 */
export function rewriteTableDefinition(raw: Database.Database, sqlTable: string, edit: (ddl: string) => string): void {
  const row = raw.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(sqlTable) as { sql: string } | undefined;
  if (!row) throw new MirrorError(`no table ${sqlTable} in the SQLite mirror`);
  const rewritten = edit(row.sql);
  if (rewritten === row.sql) return;
  withWritableSchema(raw, () => {
    raw.prepare(`UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?`).run(rewritten, sqlTable);
  });
  const check = raw.pragma(`integrity_check(${quoteIdent(sqlTable)})`) as { integrity_check: string }[];
  if (check[0]?.integrity_check !== 'ok') throw new MirrorError(`the SQLite mirror failed its integrity check after rewriting the definition of ${sqlTable}`);
}

/** `text` matched literally inside a regular expression. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
