import type { DroppedRelations, WriteTx } from '../dialect-driver.ts';
import { TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { ReadableView } from '../readable-view.ts';
import { namesGivenToOthers } from '../view-growth.ts';

/**
 * Views of users' own through a schema change. Postgres refuses to drop or alter what a view
 * reads, naming the view. SQLite checks no view when a table or view is dropped or a view made
 * again, and its views name what they read: a step of a change could leave a view of a user's
 * unreadable (a readable view's column renamed or gone), and SQLite would then refuse every later
 * ALTER TABLE … RENAME or DROP COLUMN of the file, naming that view, whichever table it was for.
 * So the steps that can do that are checked as they are made (DialectDriver.unreadableViews), and
 * one that leaves unreadable a view of a user's that read before the change began is refused for
 * the table whose change it is, as Postgres would refuse it: that table is held back, saying so.
 */

/** The views of users' own that did not read when a change began (name → reason): not the change's doing. */
export type UnreadableBefore = ReadonlyMap<string, string>;

export function unreadableViewsBefore(ctx: MirrorContext, tx: WriteTx): Promise<UnreadableBefore> {
  return ctx.driver.unreadableViews(tx);
}

/** Refuses the change of `tableId` when a view of a user's no longer reads that did before it began. */
export async function refuseUnreadableViews(ctx: MirrorContext, tx: WriteTx, before: UnreadableBefore, tableId: string): Promise<void> {
  for (const [name, reason] of await ctx.driver.unreadableViews(tx)) {
    if (before.has(name)) continue;
    throw new TableSchemaError(tableId, new Error(`view ${name} would no longer read after this change: ${reason}`), { dependants: true });
  }
}

/**
 * Refuses the change of `tableId` when it gives a column name of its readable view `before` to
 * another field (`after`: two fields swapping names) and a view of a user's reads that view by
 * its columns' names (SQLite): it would go on reading, and show the other field's values.
 */
export async function refuseSwappedColumns(ctx: MirrorContext, tx: WriteTx, tableId: string, before: ReadableView, after: ReadableView): Promise<void> {
  const swapped = namesGivenToOthers(before, after);
  if (swapped.length === 0) return;
  const readers = await ctx.driver.viewsReadingByName(tx, before.viewName);
  if (readers.length === 0) return;
  throw new TableSchemaError(tableId, new Error(`view ${readers.join(', ')} reads ${before.viewName} by its columns' names, and this change gives `
    + `${swapped.map((n) => JSON.stringify(n)).join(', ')} to other fields (names swapped upstream): it would show their values instead`), { dependants: true });
}

/**
 * Refuses the change of `tableId` before it takes any lock when views of users' own read what it
 * drops (`dropped`; `own`: the mirror's views), as the database would refuse its DDL. Postgres
 * finds such a view only once it holds the locks of what the view reads, and then waits for the
 * view's own lock: a query of the view holds that and waits for what it reads, and one of the
 * two failed with a deadlock. Checked first, a refused change locks nothing, and the query only
 * waits as long as the change's other locks are held.
 */
export async function refuseDroppingWhatViewsRead(
  ctx: MirrorContext, tx: WriteTx, tableId: string, dropped: DroppedRelations, own: readonly string[],
): Promise<void> {
  const readers = await ctx.driver.viewsDependingOn(tx, dropped, own);
  if (readers.length === 0) return;
  throw new TableSchemaError(tableId, new Error(`other objects depend on what this change drops: ${readers.join('; ')}`), { dependants: true });
}
