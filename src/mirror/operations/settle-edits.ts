import { sql } from 'kysely';
import type { CompiledQuery, Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { MirrorError } from '../errors.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { CreatedRow, EditOutcome } from '../outbox.ts';
import { recordCreatedWrites, referenceWrites } from './created-rows.ts';
import { chunks, entryIdIn } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';
import { referenceFields, waitersDueNow } from './waiting-entries.ts';

/**
 * Records what became of pushed edits, all in ONE daemon transaction: pushed and discarded
 * entries go; a created record's temporary id becomes its upstream id everywhere; failures,
 * conflicts and retries update the entries' status, attempts, error and next attempt (an
 * unanswered create stays marked as being sent). What the
 * writes need (the created rows' temporary ids, the tables, the references to them) is read
 * first, in a few statements; the writes then go together at commit, on Postgres in one round trip
 * (a push of 1,000 local inserts made about 7,000 before).
 */
export async function settleEdits(ctx: MirrorContext, outcomes: readonly EditOutcome[]): Promise<void> {
  assertOpen(ctx);
  if (outcomes.length === 0) return;
  const cat = ctx.driver.catalog(ctx.driver.db);
  const writes: CompiledQuery[] = [];
  const created = outcomes.flatMap((o) => (o.kind === 'pushed' && o.createdId !== undefined ? [{ entryIds: o.entryIds, createdId: o.createdId }] : []));
  if (created.length > 0) writes.push(...await bindingWrites(ctx, cat, await createdRows(ctx, cat, created)));
  const gone = outcomes.flatMap((o) => (o.kind === 'pushed' || o.kind === 'discarded' ? o.entryIds : []));
  for (const chunk of chunks(gone)) writes.push(cat.deleteFrom('_wsmirror_outbox').where(entryIdIn(ctx, chunk)).compile());
  for (const outcome of outcomes) {
    if (outcome.kind === 'pushed' || outcome.kind === 'discarded') continue;
    for (const chunk of chunks(outcome.entryIds)) {
      if (outcome.kind === 'waiting') {
        writes.push(cat.updateTable('_wsmirror_outbox')
          .set((eb) => ({
            status: 'pending',
            last_error: outcome.message,
            next_attempt_at: eb.fn.coalesce(blockerRetryAt(cat, outcome), eb.val(outcome.nextAttemptAt)),
            sending_since: null,
          }))
          .where(entryIdIn(ctx, chunk)).compile());
        continue;
      }
      if (outcome.kind === 'unanswered') {
        // Still marked as being sent: the next push looks it up instead of sending it blind.
        writes.push(cat.updateTable('_wsmirror_outbox')
          .set((eb) => ({
            status: 'pending',
            attempts: eb('attempts', '+', outcome.attempt ? 1 : 0),
            last_error: outcome.message,
            next_attempt_at: outcome.nextAttemptAt,
          }))
          .where(entryIdIn(ctx, chunk)).compile());
        continue;
      }
      writes.push(cat.updateTable('_wsmirror_outbox')
        .set((eb) => ({
          status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
          attempts: eb('attempts', '+', 1),
          last_error: outcome.message,
          next_attempt_at: outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
          sending_since: null,
        }))
        .where(entryIdIn(ctx, chunk)).compile());
    }
  }
  await ctx.driver.write(async (tx) => tx.atCommit(writes));
}

/** When the create a waiting edit waits for is tried again, if it backs off past the wait's `now`. */
function blockerRetryAt(cat: Kysely<CatalogDb>, outcome: Extract<EditOutcome, { kind: 'waiting' }>) {
  return cat.selectFrom('_wsmirror_outbox as b')
    .select((eb) => eb.fn.max('b.next_attempt_at').as('at'))
    .where('b.table_id', '=', outcome.blocker.tableId).where('b.record_id', '=', outcome.blocker.recordId)
    .where('b.operation', '=', 'insert').where('b.status', '=', 'pending')
    .where('b.next_attempt_at', '>', outcome.now);
}

/** The local inserts behind these creates, each with the id its row has now (one read). */
async function createdRows(ctx: MirrorContext, cat: Kysely<CatalogDb>, created: readonly { entryIds: readonly number[]; createdId: number }[]): Promise<CreatedRow[]> {
  const inserts = new Map<number, { table_id: string; record_id: unknown }>();
  for (const chunk of chunks(created.flatMap((c) => c.entryIds))) {
    const rows = await cat.selectFrom('_wsmirror_outbox').select(['entry_id', 'table_id', 'record_id'])
      .where(entryIdIn(ctx, chunk)).where('operation', '=', 'insert').execute();
    for (const r of rows) inserts.set(Number(r.entry_id), r);
  }
  return created.map(({ entryIds, createdId }) => {
    const insert = entryIds.map((id) => inserts.get(id)).find((r) => r !== undefined);
    if (!insert) throw new MirrorError(`settle: entries ${entryIds.join(', ')} hold no local insert to bind to upstream id ${createdId}`);
    return { tableId: insert.table_id, tempId: Number(insert.record_id), createdId };
  });
}

/**
 * A local insert was created upstream as `createdId`: its row, the reference columns of other
 * mirrored rows that point at it (and their outbox values), and the record's remaining entries
 * take that id, and the two ids are kept (created-rows.ts). A row already holding `createdId`
 * (pulled in meanwhile) gives way to the local one.
 * The pending entries of the record and of the rows that point at it waited for this create:
 * they are due at once (waiting-entries.ts).
 * Tables and references come from the cached catalog, which the push reads at its start.
 */
async function bindingWrites(ctx: MirrorContext, cat: Kysely<CatalogDb>, rows: readonly CreatedRow[]): Promise<CompiledQuery[]> {
  const tables = await cachedTables(ctx);
  const refs = referenceFields(tables);
  const writes: CompiledQuery[] = [];
  for (const { tableId, tempId, createdId } of rows) {
    // First, while the rows still hold the temporary id that tells them.
    writes.push(...waitersDueNow(ctx, cat, refs, tableId, tempId));
    const info = tables.get(tableId);
    // A table whose SQL table is missing holds no row to rename.
    const sqlTable = info?.missing === false ? info.table.sqlName : undefined;
    if (sqlTable !== undefined) {
      const table = ctx.driver.table(sqlTable);
      // Only for a local row to take its place: a create sent from the values its entry kept
      // (its row gone with its table) leaves the pulled row be.
      writes.push(sql`DELETE FROM ${table} WHERE ${sql.id(ID_COLUMN)} = ${createdId}
        AND EXISTS (SELECT 1 FROM ${table} WHERE ${sql.id(ID_COLUMN)} = ${tempId})`.compile(cat));
      writes.push(sql`UPDATE ${table} SET ${sql.id(ID_COLUMN)} = ${createdId} WHERE ${sql.id(ID_COLUMN)} = ${tempId}`.compile(cat));
    }
    writes.push(...referenceWrites(ctx, cat, refs, { tableId, tempId, createdId }));
    writes.push(cat.updateTable('_wsmirror_outbox').set({ record_id: createdId })
      .where('table_id', '=', tableId).where('record_id', '=', tempId).compile());
  }
  writes.push(...recordCreatedWrites(cat, rows));
  return writes;
}
