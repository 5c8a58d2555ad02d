import { sql } from 'kysely';
import { fieldsOf, tableCursorPrefix } from '../catalog.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { createSqlTable } from './create-sql-table.ts';
import { restoreDerivedObjects, setAsideDerivedObjects } from './derived-objects.ts';
import { absentTablesIn, mirroredTable, readCatalogTables } from './read-catalog.ts';
import { lockChangedTables } from './schema-change-locks.ts';

/**
 * Marks tables to be mirrored again (`wsmirror resync`), in one daemon transaction: each goes
 * back to `needs_backfill` with its cursors (changes, backfill, scan checkpoint) and last error
 * forgotten, so the next cycle reads every record afresh. Rows stay until that backfill replaces
 * them: readers keep their data meanwhile, and local edits keep their outbox entries (the pull
 * never overwrites a column that has one). A table whose SQL table is missing (dropped outside
 * wsmirror) gets it again, empty, with its capture triggers and readable view. Other tables are
 * not touched, but for the views (and keys) of those referencing a table made again.
 */
export async function resetTables(ctx: MirrorContext, tableIds: readonly string[]): Promise<void> {
  for (const id of tableIds) await mirroredTable(ctx, id);
  try {
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
      await remakeMissingTables(ctx, tx, tableIds);
    });
  } finally {
    ctx.tables = undefined;
  }
}

/** The SQL tables of `tableIds` that are missing, made again from the catalog, as a schema change would make them. */
async function remakeMissingTables(ctx: MirrorContext, tx: WriteTx, tableIds: readonly string[]): Promise<void> {
  const catalog = await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db));
  const named = catalog.tables.filter((t) => tableIds.includes(t.tableId));
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, named));
  if (absent.size === 0) return;
  // The tables referencing them get their views (and keys) again, showing their display values.
  await lockChangedTables(ctx, tx, absent);
  const scope = await setAsideDerivedObjects(ctx, tx, absent);
  for (const table of named) {
    if (!absent.has(table.tableId)) continue;
    ctx.logger?.info({ table: table.sqlName }, `making the missing SQL table ${table.sqlName} again`);
    await createSqlTable(ctx, tx, table, fieldsOf(catalog, table.tableId));
  }
  await restoreDerivedObjects(ctx, tx, scope);
}
