import type { CursorWrites } from '../mirror.ts';
import type { WriteTx } from '../dialect-driver.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';

/** A cursor's value, or undefined when it was never set. */
export async function getCursor(ctx: MirrorContext, key: string): Promise<string | undefined> {
  assertOpen(ctx);
  const row = await ctx.driver.catalog(ctx.driver.db).selectFrom('_wsmirror_cursors').select('value')
    .where('name', '=', key).executeTakeFirst();
  return row?.value;
}

/** Every cursor by key, in one read (a cycle's snapshot: see SyncEngine). */
export async function readCursors(ctx: MirrorContext): Promise<Map<string, string>> {
  assertOpen(ctx);
  const rows = await ctx.driver.catalog(ctx.driver.db).selectFrom('_wsmirror_cursors').select(['name', 'value']).execute();
  return new Map(rows.map((r) => [r.name, r.value]));
}

/** Sets (or with null, deletes) one cursor, in its own transaction. */
export async function setCursor(ctx: MirrorContext, key: string, value: string | null): Promise<void> {
  assertOpen(ctx);
  await ctx.driver.write(async (tx) => writeCursors(ctx, tx, { [key]: value }));
}

/**
 * Writes cursors (a null value deletes its cursor) at the commit of a transaction that also
 * writes what they cover.
 */
export function writeCursors(ctx: MirrorContext, tx: WriteTx, cursors: CursorWrites | undefined): void {
  if (!cursors) return;
  const cat = ctx.driver.catalog(tx.db);
  const now = new Date().toISOString();
  tx.atCommit(Object.entries(cursors).map(([name, value]) => (value === null
    ? cat.deleteFrom('_wsmirror_cursors').where('name', '=', name).compile()
    : cat.insertInto('_wsmirror_cursors').values({ name, value, updated_at: now })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: now })).compile())));
}
