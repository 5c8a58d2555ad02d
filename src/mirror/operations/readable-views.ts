import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { readableViewOf } from '../readable-view.ts';
import { dropViewStatement } from '../view-sql.ts';
import { readCatalogTables } from './read-catalog.ts';

/**
 * The readable view of every mirrored table (readable-view.ts; each dialect's readable-views.ts
 * writes the SQL). Like the capture triggers, a schema change drops them all before its DDL
 * (SQLite refuses to drop a column a view names, Postgres to drop or retype one) and creates
 * them again after it from the catalog as it then stands: a view always matches its table, and
 * the display columns of references follow changes to the referenced tables.
 */
export async function dropViews(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select('view_name').execute();
  await ctx.driver.runScript(tx, rows.flatMap(({ view_name }) => (view_name === null ? [] : [dropViewStatement(ctx.driver.names, view_name)])));
}

export async function createViews(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const { tables, fields } = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const byId = new Map(tables.map((t) => [t.tableId, t]));
  await ctx.driver.runScript(tx, [
    ...ctx.dialect.viewSetupSql(ctx.driver.names),
    ...tables.flatMap((table) => (table.viewName === null ? [] : ctx.dialect.createViewSql(ctx.driver.names, readableViewOf(table, fields, byId, ctx.dialect)))),
  ]);
}
