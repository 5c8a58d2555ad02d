import type Database from 'better-sqlite3';
import type { ColumnSpec, RowSink, RowsToKeep } from '../dialect-driver.ts';
import { quoteIdent } from '../sql-text.ts';
import { BoundRows } from './bound-rows.ts';
import type { Statement, StatementCache } from './statement-cache.ts';
import { UpsertStatements } from './upsert-statements.ts';

/** Rows per multi-row INSERT (fewer native calls), kept under SQLite's 32766 bound variables. */
const ROWS_PER_STATEMENT = 50;
const MAX_VARIABLES = 32766;

/**
 * The pull's row writes on SQLite: upserts of many rows a statement, a row with local edits on its
 * own (its edited columns kept), and deletes by id. The caller holds the write transaction.
 */
export class RowWrites {
  readonly #raw: Database.Database;
  readonly #statements: StatementCache;
  readonly #upserts = new UpsertStatements();

  constructor(raw: Database.Database, statements: StatementCache) {
    this.#raw = raw;
    this.#statements = statements;
  }

  upsert(sqlTable: string, columns: readonly ColumnSpec[], rows: RowSink, keep?: RowsToKeep): void {
    if (!(rows instanceof BoundRows) || rows.width !== columns.length) {
      throw new Error('upsertRows takes the rows of this driver\'s rowSink(), filled for these columns');
    }
    let values = rows.values;
    let count = rows.ids.length;
    if (keep && rows.ids.some((id) => keep.wholeRows.has(id) || keep.columns.has(id))) {
      // Rows with local edits (rare): left out of the bulk statements, those with kept columns
      // written one by one.
      values = [];
      count = 0;
      // Rows keeping the same columns share a statement, for this call only.
      const keeping = new Map<string, Statement>();
      rows.ids.forEach((id, index) => {
        if (keep.wholeRows.has(id)) return;
        const kept = keep.columns.get(id);
        if (kept) {
          const key = [...kept].sort().join('\0');
          let stmt = keeping.get(key);
          if (!stmt) keeping.set(key, stmt = this.#upsertStatement(sqlTable, columns, 1, kept));
          stmt.run(rows.row(index));
        } else {
          for (const value of rows.row(index)) values.push(value);
          count++;
        }
      });
    }
    const width = columns.length;
    const perStatement = Math.max(1, Math.min(ROWS_PER_STATEMENT, Math.floor(MAX_VARIABLES / width)));
    let i = 0;
    if (perStatement > 1 && count >= perStatement) {
      const many = this.#upsertStatement(sqlTable, columns, perStatement);
      for (; i + perStatement <= count; i += perStatement) many.run(values.slice(i * width, (i + perStatement) * width));
    }
    if (i < count) {
      const one = this.#upsertStatement(sqlTable, columns, 1);
      for (; i < count; i++) one.run(values.slice(i * width, (i + 1) * width));
    }
  }

  delete(sqlTable: string, ids: readonly number[]): number {
    const stmt = this.#statements.prepare(`DELETE FROM ${quoteIdent(sqlTable)} WHERE "id" = ?`);
    let deleted = 0;
    for (const id of ids) deleted += stmt.run(id).changes;
    return deleted;
  }

  clear(): void {
    this.#upserts.clear();
  }

  /**
   * The upsert of `rowCount` rows, prepared once per table layout and row count: a pull runs it
   * for every 50 rows, so even compiling its text each time would show. Not through the
   * statement cache, which would keep the upserts of layouts gone by.
   */
  #upsertStatement(sqlTable: string, columns: readonly ColumnSpec[], rowCount: number, kept?: ReadonlySet<string>): Statement {
    const layout = columns.map((c) => c.name).join('\0');
    let stmt = kept ? undefined : this.#upserts.get(sqlTable, layout, rowCount);
    if (stmt) return stmt;
    const names = columns.map((c) => quoteIdent(c.name)).join(', ');
    const placeholders = `(${columns.map(() => '?').join(', ')})`;
    const updates = columns
      .filter((c) => c.name !== 'id' && !kept?.has(c.name))
      .map((c) => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`).join(', ');
    stmt = this.#raw.prepare(`INSERT INTO ${quoteIdent(sqlTable)} (${names})
      VALUES ${Array.from({ length: rowCount }, () => placeholders).join(', ')}
      ON CONFLICT ("id") DO UPDATE SET ${updates}`);
    if (!kept) this.#upserts.set(sqlTable, layout, columns.length, rowCount, stmt);
    return stmt;
  }
}
