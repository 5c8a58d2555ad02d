import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { readableViewOf, type ReadableView } from '../readable-view.ts';
import { dropViewStatement } from '../view-sql.ts';
import { absentTablesIn, readCatalogTables } from './read-catalog.ts';
import { schemaRefusal } from './schema-refusal.ts';

/**
 * The readable view of every mirrored table (readable-view.ts; each dialect's readable-views.ts
 * writes the SQL). Like the capture triggers, a schema change drops those of the tables it
 * touches before its DDL (SQLite refuses to drop a column a view names, Postgres to drop or
 * retype one) and creates them again after it from the catalog as it then stands: a view always
 * matches its table. The views of the tables referencing a touched table keep their columns:
 * they are made again in place (replaceViews), showing no display value of it while its DDL
 * runs, then its display column as it then stands.
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
      throw schemaRefusal(ctx, table_id, error);
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
 * (Dialect.rebindViewSql): views of users' own on them stay. One the database refuses names its table.
 */
export async function rebindViews(ctx: MirrorContext, tx: WriteTx, only: ReadonlySet<string>): Promise<void> {
  await inPlace(ctx, tx, new Map([...only].map((id) => [id, id])), new Set(), (view) => ctx.dialect.rebindViewSql(ctx.driver.names, view));
}

/**
 * Makes the views of the tables `changeOf` names again in place, with the same columns
 * (Dialect.replaceViewSql): views of users' own on them keep working. The tables of `hidden` show
 * as not mirrored (no display value). One the database refuses names the table `changeOf` gives
 * for it: the one whose change needs it.
 */
export async function replaceViews(ctx: MirrorContext, tx: WriteTx, changeOf: ReadonlyMap<string, string>, hidden: ReadonlySet<string> = new Set()): Promise<void> {
  await inPlace(ctx, tx, changeOf, hidden, (view) => ctx.dialect.replaceViewSql(ctx.driver.names, view));
}

/** One table's statements at a time, so that a refusal names a table; none for a table whose SQL table is missing. */
async function inPlace(
  ctx: MirrorContext, tx: WriteTx, changeOf: ReadonlyMap<string, string>, hidden: ReadonlySet<string>, statements: (view: ReadableView) => string[],
): Promise<void> {
  if (changeOf.size === 0) return;
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select(['table_id as tableId', 'sql_name as sqlName']).execute();
  const absent = new Set([...hidden, ...await absentTablesIn(ctx.driver, tx.db, rows)]);
  for (const view of await viewsOf(ctx, tx, new Set(changeOf.keys()), absent)) {
    try {
      await ctx.driver.runScript(tx, statements(view));
    } catch (error) {
      throw schemaRefusal(ctx, changeOf.get(view.table.tableId)!, error);
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
