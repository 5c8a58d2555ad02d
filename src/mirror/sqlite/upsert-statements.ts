import type { Statement } from './statement-cache.ts';

/**
 * Columns of the upserts kept, all tables together: about 9 MiB. An upsert holds the program of
 * every capture trigger of its table, so its native memory grows with the table's width: 17–19 KiB
 * per column for one row, 22–23 KiB for fifty (bench/README.md, "memory"). A table's two upserts
 * are kept whatever its width while it is the one written.
 */
const MAX_COLUMNS = 450;

interface TableUpserts {
  /** The columns the statements write, as `UpsertStatements.get` is asked for them. */
  layout: string;
  columns: number;
  byRowCount: Map<number, Statement>;
}

/**
 * The row upserts of each table's current columns, by row count. better-sqlite3 frees a
 * statement's native memory only when V8 collects it, and V8 does not see that memory, so
 * nothing here keeps an upsert that cannot run again: a table's upserts go as soon as its columns
 * change, and past MAX_COLUMNS those of the tables written longest ago go.
 */
export class UpsertStatements {
  /** Least recently written first. */
  readonly #tables = new Map<string, TableUpserts>();
  #columns = 0;

  get(sqlTable: string, layout: string, rowCount: number): Statement | undefined {
    const upserts = this.#tables.get(sqlTable);
    if (upserts?.layout !== layout) return undefined;
    this.#tables.delete(sqlTable);
    this.#tables.set(sqlTable, upserts);
    return upserts.byRowCount.get(rowCount);
  }

  set(sqlTable: string, layout: string, columns: number, rowCount: number, stmt: Statement): void {
    let upserts = this.#tables.get(sqlTable);
    if (upserts?.layout !== layout) {
      if (upserts) this.#drop(sqlTable, upserts);
      upserts = { layout, columns, byRowCount: new Map() };
      this.#tables.set(sqlTable, upserts);
    }
    if (!upserts.byRowCount.has(rowCount)) this.#columns += columns;
    upserts.byRowCount.set(rowCount, stmt);
    for (const [name, other] of this.#tables) {
      if (this.#columns <= MAX_COLUMNS || other === upserts) break;
      this.#drop(name, other);
    }
  }

  clear(): void {
    this.#tables.clear();
    this.#columns = 0;
  }

  #drop(sqlTable: string, upserts: TableUpserts): void {
    this.#tables.delete(sqlTable);
    this.#columns -= upserts.columns * upserts.byRowCount.size;
  }
}
