import { sql } from 'kysely';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { OutboxFilter } from '../outbox.ts';
import { chunks, entryIdIn, selectEntryIds } from './outbox-rows.ts';

/**
 * Deletes entries, in one daemon transaction. A discarded local insert takes its row and the
 * record's other entries with it (the record never existed upstream). Returns the upstream
 * records whose local edits were dropped, to be read again from upstream.
 */
export async function discardOutbox(
  ctx: MirrorContext, filter: Omit<OutboxFilter, 'statuses'>,
): Promise<{ tableId: string; recordId: number }[]> {
  assertOpen(ctx);
  const result = await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    const ids = await selectEntryIds(cat, filter);
    const records = new Map<string, { tableId: string; recordId: number; sqlTable: string; insert: boolean }>();
    for (const chunk of chunks(ids)) {
      const rows = await cat.selectFrom('_wsmirror_outbox').select(['table_id', 'record_id', 'operation', 'sql_table'])
        .where(entryIdIn(ctx, chunk)).execute();
      for (const r of rows) {
        const key = `${r.table_id}\u0000${String(r.record_id)}`;
        const known = records.get(key);
        const insert = r.operation === 'insert' || known?.insert === true;
        records.set(key, { tableId: r.table_id, recordId: Number(r.record_id), sqlTable: r.sql_table, insert });
      }
      await cat.deleteFrom('_wsmirror_outbox').where(entryIdIn(ctx, chunk)).execute();
    }
    const tables = new Map((await cat.selectFrom('_wsmirror_tables').select(['table_id', 'sql_name']).execute()).map((t) => [t.table_id, t.sql_name]));
    // Two statements per discarded insert, sent with COMMIT (on Postgres one round trip for all).
    for (const r of records.values()) {
      if (!r.insert) continue;
      tx.atCommit([cat.deleteFrom('_wsmirror_outbox').where('table_id', '=', r.tableId).where('record_id', '=', r.recordId).compile()]);
      const sqlTable = tables.get(r.tableId);
      if (sqlTable !== undefined) {
        tx.atCommit([sql`DELETE FROM ${ctx.driver.table(sqlTable)} WHERE ${sql.id(ID_COLUMN)} = ${r.recordId}`.compile(tx.db)]);
      }
    }
    return [...records.values()].filter((r) => !r.insert && r.recordId > 0).map((r) => ({ tableId: r.tableId, recordId: r.recordId }));
  });
  return result;
}
