import type { MirrorField, MirrorTable } from '../catalog.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { temporaryViewName } from '../naming.ts';
import { readableViewOf, type ReadableView } from '../readable-view.ts';
import { dropViewStatement } from '../view-sql.ts';
import { absentTablesIn, readCatalogTables } from './read-catalog.ts';
import { schemaRefusal } from './schema-refusal.ts';
import { refuseSwappedColumns, refuseUnreadableViews, type UnreadableBefore } from './users-views.ts';

/**
 * The readable view of every mirrored table (readable-view.ts; each dialect's readable-views.ts
 * writes the SQL). A schema change sets aside the views of the tables it touches before its DDL
 * and makes them again after it from the catalog as it then stands: a view always matches its
 * table. Views of users' own on them keep working wherever the database lets them:
 *
 * - A touched table's view stays through the DDL where the change lets it: made again in place
 *   before it (Dialect.remakeViewSql) reading nothing the DDL drops (the columns of fields deleted
 *   or rebuilt, the display columns of the touched tables), under a temporary name when it is to
 *   take another, and made again in place after it. Where the database cannot keep it in place
 *   (Postgres: it would lose a column) it is dropped before the DDL and created after it, as it is
 *   when its table goes, and for a change that does not say what its DDL does (an upgrade's).
 * - The views of the tables referencing a touched one keep their columns: made again in place,
 *   showing no display value of it while its DDL runs, then its display column as it then stands.
 *
 * A refusal, or a view of a user's left unreadable (users-views.ts), names the table whose change
 * needs it.
 */

/** What a schema plan does that the views of the tables it touches must make way for. */
export interface ViewChanges {
  /** Fields whose columns the DDL drops: deleted upstream, or retyped and rebuilt. */
  readonly goingFields: ReadonlySet<string>;
  /** Tables the DDL drops. */
  readonly droppedTables: ReadonlySet<string>;
  /** The name each table's view takes, where the plan gives one. */
  readonly viewNames: ReadonlyMap<string, string>;
}

/** The tables whose views a change sets aside, as derived-objects.ts scopes them. */
export interface ViewScope {
  readonly touched: ReadonlySet<string>;
  /** Each table referencing a touched one, and the touched one whose change needs its view. */
  readonly referencing: ReadonlyMap<string, string>;
  readonly unreadableBefore: UnreadableBefore;
}

/** The views of touched tables left standing through the DDL, as they then stand, by table id. */
export type KeptViews = ReadonlyMap<string, ReadableView>;

/** Before the DDL: each view of the scope made ready for it (see above); returns those kept standing. */
export async function setAsideViews(ctx: MirrorContext, tx: WriteTx, scope: ViewScope, changes?: ViewChanges): Promise<KeptViews> {
  const catalog = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, catalog.tables));
  const kept = new Map<string, ReadableView>();
  for (const { table, statements, interim } of touchedViewsSetAside(ctx, catalog, absent, scope.touched, changes)) {
    await run(ctx, tx, table.tableId, statements);
    if (interim) kept.set(table.tableId, interim);
    // Not a view dropped only to be created after the DDL: a view of a user's on it reads it again then.
    if (interim || changes?.droppedTables.has(table.tableId)) await refuseUnreadableViews(ctx, tx, scope.unreadableBefore, table.tableId);
  }
  const all = targetsOf(catalog.tables, absent);
  const untouched = targetsOf(catalog.tables, new Set([...absent, ...scope.touched]));
  for (const table of catalog.tables) {
    const changeOf = scope.referencing.get(table.tableId);
    if (changeOf === undefined || table.viewName === null || absent.has(table.tableId)) continue;
    // Its columns stay: only the display values of the touched tables go.
    await run(ctx, tx, changeOf, remakeSql(ctx, viewOf(table, catalog.fields, all, ctx), viewOf(table, catalog.fields, untouched, ctx)));
  }
  return kept;
}

/**
 * The views of the `touched` tables that a change (`changes`) drops rather than making them again
 * in place, by table id: what setAsideViews will do, known before any of it runs.
 */
export async function viewsDroppedBy(ctx: MirrorContext, tx: WriteTx, touched: ReadonlySet<string>, changes?: ViewChanges): Promise<Map<string, string>> {
  const catalog = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, catalog.tables));
  return new Map(touchedViewsSetAside(ctx, catalog, absent, touched, changes)
    .flatMap(({ table, interim }) => (interim || absent.has(table.tableId) ? [] : [[table.tableId, table.viewName!] as const])));
}

/** How the view of each touched table makes way for the DDL: `statements`, leaving it standing as `interim` (made again in place), or dropped. */
function touchedViewsSetAside(
  ctx: MirrorContext, catalog: { tables: readonly MirrorTable[]; fields: readonly MirrorField[] }, absent: ReadonlySet<string>, touched: ReadonlySet<string>, changes?: ViewChanges,
): { table: MirrorTable; statements: string[]; interim: ReadableView | undefined }[] {
  const { names } = ctx.driver;
  const all = targetsOf(catalog.tables, absent);
  const untouched = targetsOf(catalog.tables, new Set([...absent, ...touched]));
  let renamed = 0;
  return catalog.tables.filter((t) => touched.has(t.tableId) && t.viewName !== null).map((table) => {
    let interim: ReadableView | undefined;
    if (changes !== undefined && !absent.has(table.tableId) && !changes.droppedTables.has(table.tableId)) {
      const newName = changes.viewNames.get(table.tableId) ?? table.viewName!;
      const viewName = newName === table.viewName ? table.viewName : temporaryViewName(renamed++);
      const fields = catalog.fields.filter((f) => !changes.goingFields.has(f.fieldId));
      interim = viewOf({ ...table, viewName }, fields, untouched, ctx);
    }
    const remake = interim && ctx.dialect.remakeViewSql(names, viewOf(table, catalog.fields, all, ctx), interim);
    return remake ? { table, statements: remake, interim } : { table, statements: [dropViewStatement(names, table.viewName!)], interim: undefined };
  });
}

/**
 * After the DDL: the views of the scope made again from the catalog as it now stands, but those
 * of `absent` (tables whose SQL table is missing, which have no view, and whose records no view
 * shows): created, or made again in place from those `setAsideViews` kept.
 */
export async function restoreViews(
  ctx: MirrorContext, tx: WriteTx, scope: ViewScope & { readonly kept: KeptViews }, absent: ReadonlySet<string>,
): Promise<void> {
  const { kept } = scope;
  const views = await viewsOf(ctx, tx, new Set([...scope.touched, ...scope.referencing.keys()]), absent);
  const created = views.filter((v) => scope.touched.has(v.table.tableId) && !kept.has(v.table.tableId));
  await ctx.driver.runScript(tx, [
    ...ctx.dialect.viewSetupSql(ctx.driver.names),
    ...created.flatMap((view) => ctx.dialect.createViewSql(ctx.driver.names, view)),
  ]);
  for (const view of views) {
    const id = view.table.tableId;
    const changeOf = scope.referencing.get(id);
    // A referencing table's view has the same columns as before the DDL.
    const before = changeOf === undefined ? kept.get(id) : view;
    if (before === undefined) continue;
    if (changeOf === undefined) await refuseSwappedColumns(ctx, tx, id, before, view);
    await run(ctx, tx, changeOf ?? id, remakeSql(ctx, before, view));
    if (changeOf === undefined) await refuseUnreadableViews(ctx, tx, scope.unreadableBefore, id);
  }
}

/** Drops the views of every table (an upgrade making them all again). */
export async function dropViews(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select('view_name').execute();
  await ctx.driver.runScript(tx, rows.flatMap(({ view_name }) => (view_name === null ? [] : [dropViewStatement(ctx.driver.names, view_name)])));
}

/** Creates the views of every table but those of `absent` (see restoreViews). */
export async function createViews(ctx: MirrorContext, tx: WriteTx, absent: ReadonlySet<string>): Promise<void> {
  const views = await viewsOf(ctx, tx, undefined, absent);
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
  if (only.size === 0) return;
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select(['table_id as tableId', 'sql_name as sqlName']).execute();
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, rows));
  for (const view of await viewsOf(ctx, tx, only, absent)) await run(ctx, tx, view.table.tableId, ctx.dialect.rebindViewSql(ctx.driver.names, view));
}

/** `before` made into `after` in place where the dialect can, else dropped and created. */
function remakeSql(ctx: MirrorContext, before: ReadableView, after: ReadableView): string[] {
  const { names } = ctx.driver;
  return ctx.dialect.remakeViewSql(names, before, after) ?? [dropViewStatement(names, before.viewName), ...ctx.dialect.createViewSql(names, after)];
}

/** Runs one table's statements; a refusal names `tableId`, the table whose change needs them. */
async function run(ctx: MirrorContext, tx: WriteTx, tableId: string, statements: string[]): Promise<void> {
  try {
    await ctx.driver.runScript(tx, statements);
  } catch (error) {
    throw schemaRefusal(ctx, tableId, error);
  }
}

/** The tables a view may show display values of: all but `hidden`, which show as not mirrored. */
function targetsOf(tables: readonly MirrorTable[], hidden: ReadonlySet<string>): Map<string, MirrorTable> {
  return new Map(tables.filter((t) => !hidden.has(t.tableId)).map((t) => [t.tableId, t]));
}

function viewOf(table: MirrorTable, fields: readonly MirrorField[], targets: ReadonlyMap<string, MirrorTable>, ctx: MirrorContext): ReadableView {
  return readableViewOf(table, fields, targets, ctx.dialect);
}

/** The views of the tables of `only` (every table's when undefined) but those of `absent`, from the catalog in `tx`. */
async function viewsOf(ctx: MirrorContext, tx: WriteTx, only: ReadonlySet<string> | undefined, absent: ReadonlySet<string>): Promise<ReadableView[]> {
  const { fields, tables } = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const targets = targetsOf(tables, absent);
  return tables.filter((table) => table.viewName !== null && !absent.has(table.tableId) && (only === undefined || only.has(table.tableId)))
    .map((table) => viewOf(table, fields, targets, ctx));
}
