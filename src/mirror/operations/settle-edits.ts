import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { WriteTx } from '../dialect.ts';
import { MirrorError } from '../errors.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { EditOutcome } from '../outbox.ts';
import { chunks, entryIdIn, jsonSql } from './outbox-rows.ts';

/**
 * Records what became of pushed edits, all in ONE daemon transaction: pushed and discarded
 * entries go; a created record's temporary id becomes its upstream id everywhere; failures,
 * conflicts and retries update the entries' status, attempts, error and next attempt.
 */
export async function settleEdits(ctx: MirrorContext, outcomes: readonly EditOutcome[]): Promise<void> {
  assertOpen(ctx);
  if (outcomes.length === 0) return;
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    for (const outcome of outcomes) {
      if (outcome.kind === 'pushed' && outcome.createdId !== undefined) await bindCreatedId(ctx, tx, outcome.entryIds, outcome.createdId);
      if (outcome.kind === 'pushed' || outcome.kind === 'discarded') {
        for (const chunk of chunks(outcome.entryIds)) await cat.deleteFrom('_wsmirror_outbox').where(entryIdIn(ctx, chunk)).execute();
        continue;
      }
      const status = outcome.kind === 'retry' ? 'pending' : outcome.kind;
      for (const chunk of chunks(outcome.entryIds)) {
        await cat.updateTable('_wsmirror_outbox')
          .set((eb) => ({
            status,
            attempts: eb('attempts', '+', 1),
            last_error: outcome.message,
            next_attempt_at: outcome.kind === 'retry' ? outcome.nextAttemptAt : null,
            sending_since: null,
          }))
          .where(entryIdIn(ctx, chunk)).execute();
      }
    }
  });
}

/**
 * A local insert was created upstream as `createdId`: its row, the reference columns of other
 * mirrored rows that point at it (and their outbox values), and the record's remaining entries
 * take that id. A row already holding `createdId` (pulled in meanwhile) gives way to the local one.
 */
async function bindCreatedId(ctx: MirrorContext, tx: WriteTx, entryIds: readonly number[], createdId: number): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  const insert = await cat.selectFrom('_wsmirror_outbox').select(['table_id', 'record_id'])
    .where('entry_id', 'in', [...entryIds]).where('operation', '=', 'insert').executeTakeFirst();
  if (!insert) throw new MirrorError(`settle: entries ${entryIds.join(', ')} hold no local insert to bind to upstream id ${createdId}`);
  const tableId = insert.table_id;
  const tempId = Number(insert.record_id);
  const tables = new Map((await cat.selectFrom('_wsmirror_tables').select(['table_id', 'sql_name']).execute()).map((t) => [t.table_id, t.sql_name]));
  const sqlTable = tables.get(tableId);
  if (sqlTable !== undefined) {
    const table = ctx.driver.table(sqlTable);
    await sql`DELETE FROM ${table} WHERE ${sql.id(ID_COLUMN)} = ${createdId}`.execute(tx.db);
    await sql`UPDATE ${table} SET ${sql.id(ID_COLUMN)} = ${createdId} WHERE ${sql.id(ID_COLUMN)} = ${tempId}`.execute(tx.db);
  }
  await rebindReferences(ctx, tx, cat, tables, tableId, tempId, createdId);
  await cat.updateTable('_wsmirror_outbox').set({ record_id: createdId })
    .where('table_id', '=', tableId).where('record_id', '=', tempId).execute();
}

async function rebindReferences(
  ctx: MirrorContext, tx: WriteTx, cat: Kysely<CatalogDb>, tables: ReadonlyMap<string, string>, refTableId: string, tempId: number, createdId: number,
): Promise<void> {
  const refs = await cat.selectFrom('_wsmirror_fields').select(['table_id', 'column_name'])
    .where('ref_table_id', '=', refTableId).where('field_type', '=', 'reference').execute();
  for (const ref of refs) {
    const sqlTable = tables.get(ref.table_id);
    if (sqlTable === undefined) continue;
    await sql`UPDATE ${ctx.driver.table(sqlTable)} SET ${sql.id(ref.column_name)} = ${createdId} WHERE ${sql.id(ref.column_name)} = ${tempId}`
      .execute(tx.db);
    for (const column of ['new_value', 'old_value'] as const) {
      await cat.updateTable('_wsmirror_outbox').set({ [column]: jsonSql(ctx, createdId) })
        .where('table_id', '=', ref.table_id).where('column_name', '=', ref.column_name)
        .where(column, '=', jsonSql(ctx, tempId)).execute();
    }
  }
}
