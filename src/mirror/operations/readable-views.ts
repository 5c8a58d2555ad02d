import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { readableViewOf } from '../readable-view.ts';
import { dropViewStatement } from '../view-sql.ts';
import { readCatalogTables } from './read-catalog.ts';
import { runStatements } from './run-statements.ts';

/**
 * The readable view of every mirrored table (readable-view.ts; each dialect's readable-views.ts
 * writes the SQL). Like the capture triggers, a schema change drops them all before its DDL
 * (SQLite refuses to drop a column a view names, Postgres to drop or retype one) and creates
 * them again after it from the catalog as it then stands: a view always matches its table, and
 * the display columns of references follow changes to the referenced tables.
 */
export async function dropViews(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select('view_name').execute();
  for (const { view_name } of rows) {
    if (view_name !== null) await runStatements(tx, [dropViewStatement(ctx.driver.names, view_name)]);
  }
}

export async function createViews(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const { tables, fields } = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const byId = new Map(tables.map((t) => [t.tableId, t]));
  await runStatements(tx, ctx.dialect.viewSetupSql(ctx.driver.names));
  for (const table of tables) {
    if (table.viewName === null) continue;
    const view = readableViewOf(table, fields, byId, ctx.dialect);
    await runStatements(tx, ctx.dialect.createViewSql(ctx.driver.names, view));
  }
}
