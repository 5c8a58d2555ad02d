import type { WriteTx } from '../dialect.ts';
import { TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';

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
