import { sql } from 'kysely';
import { tableCursorPrefix } from '../catalog.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { mirroredTable } from './read-catalog.ts';

/**
 * Marks tables to be mirrored again (`wsmirror resync`), in one daemon transaction: each goes
 * back to `needs_backfill` with its cursors (changes, backfill, scan checkpoint) and last error
 * forgotten, so the next cycle reads every record afresh. Rows stay until that backfill replaces
 * them: readers keep their data meanwhile, and local edits keep their outbox entries (the pull
 * never overwrites a column that has one). Other tables are not touched.
 */
export async function resetTables(ctx: MirrorContext, tableIds: readonly string[]): Promise<void> {
  for (const id of tableIds) await mirroredTable(ctx, id);
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    for (const id of tableIds) {
      await cat.updateTable('_wsmirror_tables')
        .set({ state: 'needs_backfill', last_error_code: null, last_error: null, last_error_at: null })
        .where('table_id', '=', id).execute();
      const prefix = tableCursorPrefix(id);
      // substr, not LIKE: ids may hold LIKE wildcards.
      await cat.deleteFrom('_wsmirror_cursors').where(sql<boolean>`substr(${sql.ref('name')}, 1, ${prefix.length}) = ${prefix}`).execute();
    }
  });
  ctx.tables = undefined;
}
