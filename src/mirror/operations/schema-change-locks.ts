import type { DroppedRelations, WriteTx } from '../dialect-driver.ts';
import { TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { absentTablesIn } from './read-catalog.ts';
import { refuseDroppingWhatViewsRead } from './users-views.ts';

/**
 * Before a schema change's DDL, the locks of each table it changes, in the plan's order: the
 * table, the tables whose derived objects its change rebuilds with it (those referencing it,
 * derived-objects.ts) and their readable views (DialectDriver.lockForSchemaChange). Taken up
 * front, no DDL waits behind a reader while holding another table's lock, which would stall that
 * table's readers too; and a table whose locks another session holds past the bound fails alone,
 * as a TableSchemaError, so the schema pull holds back that table and applies the others. Tables the plan creates are not in the catalog yet, and need none. A table whose
 * change drops what views of users' own read (`dropped`, by table id) is refused before its locks
 * are taken (users-views.ts).
 */
export async function lockChangedTables(
  ctx: MirrorContext, tx: WriteTx, tableIds: Iterable<string>, dropped?: ReadonlyMap<string, DroppedRelations>,
): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  const all = await cat.selectFrom('_wsmirror_tables').select(['table_id', 'sql_name', 'view_name']).execute();
  // A table whose SQL table is missing (dropped outside wsmirror) has nothing to lock.
  const absent = new Set(await absentTablesIn(ctx.driver, tx.db, all.map((t) => ({ tableId: t.table_id, sqlName: t.sql_name }))));
  const rows = all.filter((t) => !absent.has(t.table_id));
  const byId = new Map(rows.map((t) => [t.table_id, t]));
  const references = await cat.selectFrom('_wsmirror_fields').select(['table_id', 'ref_table_id'])
    .where('ref_table_id', 'is not', null).execute();
  const own = all.flatMap((t) => (t.view_name === null ? [] : [t.view_name]));
  const changed = [...tableIds].filter((id) => byId.has(id));
  for (const tableId of changed) {
    const drops = dropped?.get(tableId);
    if (drops !== undefined) await refuseDroppingWhatViewsRead(ctx, tx, tableId, drops, own);
  }
  const failed = await ctx.driver.lockForSchemaChange(tx, changed.map((tableId) => {
    const scope = new Set([tableId, ...references.filter((r) => r.ref_table_id === tableId).map((r) => r.table_id)]);
    const tables = [...scope].flatMap((id) => byId.get(id) ?? []);
    return { views: tables.flatMap((t) => (t.view_name === null ? [] : [t.view_name])), tables: tables.map((t) => t.sql_name) };
  }));
  if (failed !== undefined) throw new TableSchemaError(changed[failed.scope]!, failed.error);
}

/**
 * A catalog migration's locks, taken at its start, each waited for a bounded time as a schema
 * change's are: the catalog tables it alters, the mirrored tables whose triggers or columns it
 * replaces (`tableIds`) and the readable views it rebuilds (those of `viewTableIds`). The whole
 * migration is one transaction and fails whole, MirrorLockedError naming the sessions in its
 * way, with nothing changed: the next open tries again.
 */
export async function lockForMigration(
  ctx: MirrorContext, tx: WriteTx,
  { catalogTables, tableIds, viewTableIds }: { catalogTables: readonly string[]; tableIds: ReadonlySet<string>; viewTableIds: ReadonlySet<string> },
): Promise<void> {
  const rows = tableIds.size === 0 && viewTableIds.size === 0 ? []
    : await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_tables').select(['table_id', 'sql_name', 'view_name']).execute();
  const failed = await ctx.driver.lockForSchemaChange(tx, [{
    views: rows.flatMap((t) => (viewTableIds.has(t.table_id) && t.view_name !== null ? [t.view_name] : [])),
    tables: [...catalogTables, ...rows.flatMap((t) => (tableIds.has(t.table_id) ? [t.sql_name] : []))],
  }]);
  if (failed !== undefined) throw failed.error;
}
