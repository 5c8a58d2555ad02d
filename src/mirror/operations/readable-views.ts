import type { WriteTx } from '../dialect.ts';
import { TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { readableViewOf, type ReadableView } from '../readable-view.ts';
import { dropViewStatement } from '../view-sql.ts';
import { absentTablesIn, readCatalogTables } from './read-catalog.ts';

/**
 * The readable view of every mirrored table (readable-view.ts; each dialect's readable-views.ts
 * writes the SQL). Like the capture triggers, a schema change drops those of the tables it
 * touches (and of the tables referencing them) before its DDL (SQLite refuses to drop a column a
 * view names, Postgres to drop or retype one) and creates them again after it from the catalog
 * as it then stands: a view always matches its table, and the display columns of references
 * follow changes to the referenced tables.
 */
/** Drops the views of the tables of `only` (every table's when undefined). */
export async function dropViews(ctx: MirrorContext, tx: WriteTx, only?: ReadonlySet<string>): Promise<void> {
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select(['table_id', 'view_name']).execute();
  const drops = rows.filter(({ table_id, view_name }) => view_name !== null && (only === undefined || only.has(table_id)));
  // With a scope, one statement each, so that a view of a user's own on one of them (Postgres
  // refuses to drop a view another depends on) holds back that table's change only.
  if (only === undefined) {
    await ctx.driver.runScript(tx, drops.map(({ view_name }) => dropViewStatement(ctx.driver.names, view_name!)));
    return;
  }
  for (const { table_id, view_name } of drops) {
    try {
      await ctx.driver.runScript(tx, [dropViewStatement(ctx.driver.names, view_name!)]);
    } catch (error) {
      throw new TableSchemaError(table_id, error);
    }
  }
}

/**
 * Creates the views of the tables of `only` (every table's when undefined), but those of `absent`:
 * tables whose SQL table is missing, which have no view, and whose records no view shows.
 */
export async function createViews(ctx: MirrorContext, tx: WriteTx, only?: ReadonlySet<string>, absent: ReadonlySet<string> = new Set()): Promise<void> {
  const views = await viewsOf(ctx, tx, only, absent);
  await ctx.driver.runScript(tx, [
    ...ctx.dialect.viewSetupSql(ctx.driver.names),
    ...views.flatMap((view) => ctx.dialect.createViewSql(ctx.driver.names, view)),
  ]);
}

/**
 * Makes the views of the tables of `only` again in place, their calls bound anew
 * (Dialect.rebindViewSql): views of users' own on them stay. One statement each, so that one
 * the database refuses names its table.
 */
export async function rebindViews(ctx: MirrorContext, tx: WriteTx, only: ReadonlySet<string>): Promise<void> {
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select(['table_id as tableId', 'sql_name as sqlName']).execute();
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, rows));
  for (const view of await viewsOf(ctx, tx, only, absent)) {
    try {
      await ctx.driver.runScript(tx, ctx.dialect.rebindViewSql(ctx.driver.names, view));
    } catch (error) {
      throw new TableSchemaError(view.table.tableId, error);
    }
  }
}

/** The views of the tables of `only` (every table's when undefined) but those of `absent`, from the catalog in `tx`. */
async function viewsOf(ctx: MirrorContext, tx: WriteTx, only: ReadonlySet<string> | undefined, absent: ReadonlySet<string>): Promise<ReadableView[]> {
  const { fields, ...catalog } = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const tables = catalog.tables.filter((t) => !absent.has(t.tableId));
  const byId = new Map(tables.map((t) => [t.tableId, t]));
  return tables.filter((table) => table.viewName !== null && (only === undefined || only.has(table.tableId)))
    .map((table) => readableViewOf(table, fields, byId, ctx.dialect));
}
