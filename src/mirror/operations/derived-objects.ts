import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { captureTables, createCapture, dropCapture } from './capture.ts';
import { refreshFieldTables } from './field-tables.ts';
import { createForeignKeys, dropForeignKeys } from './foreign-keys.ts';
import { absentTablesIn } from './read-catalog.ts';
import { createViews, dropViews, restoreViews, setAsideViews } from './readable-views.ts';
import type { KeptViews, ViewChanges } from './readable-views.ts';
import { unreadableViewsBefore } from './users-views.ts';
import type { UnreadableBefore } from './users-views.ts';

/**
 * The objects the mirror derives from its mirrored tables and their catalog rows: the capture
 * triggers (capture.ts), the readable views (readable-views.ts) and the informational foreign
 * keys (foreign-keys.ts). They name tables and columns, and the databases refuse DDL under them
 * (SQLite will not drop or rename a column a trigger or view names, Postgres will not drop or
 * retype a column a view selects). So every DDL on mirrored tables runs between
 * `setAsideDerivedObjects` and `restoreDerivedObjects`, in one transaction: the objects come back
 * from the catalog as it then stands, and always match the tables.
 *
 * Only the objects of the tables a change touches are set aside, with those of the tables that
 * reference one of them (their views show the referenced table's display column, their keys
 * point at it): a change of one table costs in proportion to it, not to the mirror, and holds
 * the write lock that long; and views of users' own on the other tables never stand in its way.
 * Readable views are not all dropped: where the change lets them, they stay where they are through
 * it and are made again in place (readable-views.ts), so that views of users' own on them keep
 * working.
 */

/** The tables whose derived objects go (all when undefined). */
export type DerivedScope = {
  /** Those a change touches. */
  readonly touched: ReadonlySet<string>;
  /** Each table with a reference field pointing at one of them (and not touched itself), and the first of those it points at. */
  readonly referencing: ReadonlyMap<string, string>;
  /** The touched tables' views left standing through the DDL. */
  readonly kept: KeptViews;
  /** Views of users' own that did not read before the change (users-views.ts). */
  readonly unreadableBefore: UnreadableBefore;
} | undefined;

/**
 * Sets them aside, as the catalog names them before the DDL; returns the scope to restore.
 * `changes` says what the DDL does to the touched tables (a schema plan's); without it, their
 * views are dropped (an upgrade's conversions may retype any column).
 */
export async function setAsideDerivedObjects(
  ctx: MirrorContext, tx: WriteTx, touched?: ReadonlySet<string>, changes?: ViewChanges,
): Promise<DerivedScope> {
  if (touched === undefined) {
    await dropCapture(ctx, tx, await captureTables(ctx, tx));
    await dropViews(ctx, tx);
    await dropForeignKeys(ctx, tx);
    return undefined;
  }
  const referencing = await referencingTables(ctx, tx, touched);
  const tables = tablesOf({ touched, referencing });
  await dropCapture(ctx, tx, await captureTables(ctx, tx, tables));
  const views = { touched, referencing, unreadableBefore: await unreadableViewsBefore(ctx, tx) };
  const kept = await setAsideViews(ctx, tx, views, changes);
  await dropForeignKeys(ctx, tx, tables);
  return { ...views, kept };
}

/**
 * Makes them again from the catalog after the DDL, for the scope `setAsideDerivedObjects` gave:
 * exactly the objects it set aside (a table that references a touched one now either did before
 * or is touched itself). The fields' SQL tables are refreshed first: a table renamed, created or
 * dropped changes them for the fields of other tables too.
 */
export async function restoreDerivedObjects(ctx: MirrorContext, tx: WriteTx, scope?: DerivedScope): Promise<void> {
  await refreshFieldTables(ctx, tx);
  const tables = await captureTables(ctx, tx, tablesOf(scope));
  // A table whose SQL table is missing (dropped outside wsmirror) gets none until it is made
  // again, and the views of the tables referencing it show no display value for it meanwhile.
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables')
    .select(['table_id as tableId', 'sql_name as sqlName']).execute()));
  if (scope === undefined) await createViews(ctx, tx, absent);
  else await restoreViews(ctx, tx, scope, absent);
  await createForeignKeys(ctx, tx, tablesOf(scope), absent);
  await createCapture(ctx, tx, tables.filter((t) => !absent.has(t.tableId)));
}

/** Every table of the scope, touched or referencing one (undefined: all). */
export function tablesOf(scope: Pick<NonNullable<DerivedScope>, 'touched' | 'referencing'> | undefined): Set<string> | undefined {
  return scope === undefined ? undefined : new Set([...scope.touched, ...scope.referencing.keys()]);
}

/** `tables` and every table with a reference field pointing at one of them, as the catalog holds them in `tx`. */
export async function derivedScope(ctx: MirrorContext, tx: WriteTx, tables: ReadonlySet<string>): Promise<Set<string>> {
  return tablesOf({ touched: tables, referencing: await referencingTables(ctx, tx, tables) })!;
}

/** The tables, not of `touched`, with a reference field pointing at one of them, each with the first (in `touched`'s order) it points at. */
async function referencingTables(ctx: MirrorContext, tx: WriteTx, touched: ReadonlySet<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (touched.size === 0) return out;
  const rows = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_fields').select(['table_id', 'ref_table_id'])
    .where('ref_table_id', 'is not', null).execute();
  const order = [...touched];
  for (const { table_id, ref_table_id } of rows) {
    if (ref_table_id === null || !touched.has(ref_table_id) || touched.has(table_id)) continue;
    const first = out.get(table_id);
    if (first === undefined || order.indexOf(ref_table_id) < order.indexOf(first)) out.set(table_id, ref_table_id);
  }
  return out;
}
