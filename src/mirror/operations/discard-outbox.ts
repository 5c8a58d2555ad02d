import { sql } from 'kysely';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { WriteTx } from '../dialect-driver.ts';
import { ID_COLUMN } from '../naming.ts';
import type { OutboxFilter } from '../outbox.ts';
import { chunks, entryIdIn, selectEntryIds } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';
import { referenceFields, waitersDueNow } from './waiting-entries.ts';

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
    await keepValuesBefore(ctx, tx, ids);
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
    const cached = await cachedTables(ctx);
    const tables = new Map((await cat.selectFrom('_wsmirror_tables').select(['table_id', 'sql_name']).execute()).map((t) => [t.table_id, t.sql_name]));
    const refs = referenceFields(cached);
    // A few statements per discarded insert, sent with COMMIT (on Postgres one round trip for all).
    for (const r of records.values()) {
      if (!r.insert) continue;
      // What waited for the row to be created waits no more: the next push fails it, naming the row.
      tx.atCommit(waitersDueNow(ctx, cat, refs, r.tableId, r.recordId));
      tx.atCommit([cat.deleteFrom('_wsmirror_outbox').where('table_id', '=', r.tableId).where('record_id', '=', r.recordId).compile()]);
      const sqlTable = tables.get(r.tableId);
      // A missing SQL table took the row with it.
      if (sqlTable !== undefined && cached.get(r.tableId)?.missing !== true) {
        tx.atCommit([sql`DELETE FROM ${ctx.driver.table(sqlTable)} WHERE ${sql.id(ID_COLUMN)} = ${r.recordId}`.compile(tx.db)]);
      }
    }
    return [...records.values()].filter((r) => !r.insert && r.recordId > 0).map((r) => ({ tableId: r.tableId, recordId: r.recordId }));
  });
  return result;
}

/**
 * An update entry that stays after discarded ones of its field takes the value before the
 * earliest of them: the value the field held upstream before those edits, which conflict checks
 * compare with (read-base-values.ts). Otherwise a fix discarded in the documented order (fix the
 * value, then discard the failed edit) would count from the refused value, which upstream never
 * held, and be taken for a conflict.
 */
async function keepValuesBefore(ctx: MirrorContext, tx: WriteTx, discarded: readonly number[]): Promise<void> {
  if (discarded.length === 0) return;
  const cat = ctx.driver.catalog(tx.db);
  const gone = new Set(discarded);
  const updates: { entry_id: unknown; table_id: string; record_id: unknown; field_id: string | null }[] = [];
  for (const chunk of chunks(discarded)) {
    updates.push(...await cat.selectFrom('_wsmirror_outbox').select(['entry_id', 'table_id', 'record_id', 'field_id'])
      .where(entryIdIn(ctx, chunk)).where('operation', '=', 'update').where('field_id', 'is not', null).execute());
  }
  if (updates.length === 0) return;
  const byTable = new Map<string, Set<number>>();
  for (const u of updates) {
    const ids = byTable.get(u.table_id) ?? new Set<number>();
    ids.add(Number(u.record_id));
    byTable.set(u.table_id, ids);
  }
  const outbox = ctx.driver.table('_wsmirror_outbox');
  for (const [tableId, recordIds] of byTable) {
    const entries = await cat.selectFrom('_wsmirror_outbox').select(['entry_id', 'record_id', 'field_id'])
      .where('table_id', '=', tableId).where('operation', '=', 'update').where(ctx.dialect.idIn(sql.ref('record_id'), [...recordIds]))
      .orderBy('entry_id').execute();
    /** Per record and field: the earliest discarded entry since the last one that stays. */
    const runStart = new Map<string, number>();
    for (const e of entries) {
      const key = `${String(e.record_id)}\u0000${e.field_id}`;
      const id = Number(e.entry_id);
      if (gone.has(id)) {
        if (!runStart.has(key)) runStart.set(key, id);
        continue;
      }
      const first = runStart.get(key);
      if (first === undefined) continue;
      runStart.delete(key);
      await sql`UPDATE ${outbox} SET ${sql.id('old_value')} = (SELECT ${sql.id('old_value')} FROM ${outbox} WHERE ${sql.id('entry_id')} = ${first})
        WHERE ${sql.id('entry_id')} = ${id}`.execute(tx.db);
    }
  }
}
