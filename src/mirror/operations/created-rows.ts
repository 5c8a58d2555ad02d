import { sql } from 'kysely';
import type { CompiledQuery, Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { CreatedRow } from '../outbox.ts';
import { chunks, jsonSql } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';
import { referenceFields, waitersDueNow } from './waiting-entries.ts';

/**
 * Rows inserted here and created upstream: the temporary id each had and the upstream id it took,
 * kept in `_wsmirror_created` once the create's outbox entry is gone (docs/mirror.md). Temporary
 * ids are minus an outbox entry id, which is never used twice, so the record stays exact: an
 * application that kept a temporary id finds the record there, and a reference set to such an id
 * after the create follows it to the record as one set before the create did.
 */

/** Rows per INSERT of the record: three bound values each, well under SQLite's limit. */
const ROWS_PER_INSERT = 1_000;

/** Statements recording these creates, run with the settle that binds them. */
export function recordCreatedWrites(cat: Kysely<CatalogDb>, rows: readonly CreatedRow[]): CompiledQuery[] {
  return chunks(rows, ROWS_PER_INSERT).map((chunk) => cat.insertInto('_wsmirror_created')
    .values(chunk.map((r) => ({ temp_id: r.tempId, table_id: r.tableId, created_id: r.createdId })))
    .onConflict((oc) => oc.column('temp_id').doUpdateSet((eb) => ({ table_id: eb.ref('excluded.table_id'), created_id: eb.ref('excluded.created_id') })))
    .compile());
}

/**
 * Of these upstream ids of one table, those a row inserted here was created as: records already
 * bound to a local insert, which a create read-back must not bind to another. Reads the rows of
 * `_wsmirror_created` for these ids only.
 */
export async function boundCreatedIds(ctx: MirrorContext, tableId: string, createdIds: readonly number[]): Promise<Set<number>> {
  assertOpen(ctx);
  const cat = ctx.driver.catalog(ctx.driver.db);
  const bound = new Set<number>();
  for (const chunk of chunks([...new Set(createdIds)])) {
    const rows = await cat.selectFrom('_wsmirror_created').select('created_id')
      .where('table_id', '=', tableId).where(ctx.dialect.idIn(sql.ref('created_id'), chunk)).execute();
    for (const r of rows) bound.add(Number(r.created_id));
  }
  return bound;
}

/**
 * Statements pointing the references to local row `tempId` of `tableId` at `createdId`: the
 * reference columns of mirrored rows, and the values of their outbox entries. The rows of a table
 * carrying a trigger of another role (`TableInfo.foreignTrigger`) are not written: the write
 * would fail, and the settle with it. Their entries take the id all the same, and a row still
 * holding the temporary id is pointed at the record when its edit goes out (followCreatedRows).
 */
export function referenceWrites(
  ctx: MirrorContext, cat: Kysely<CatalogDb>, refs: ReturnType<typeof referenceFields>, { tableId, tempId, createdId }: CreatedRow,
): CompiledQuery[] {
  const writes: CompiledQuery[] = [];
  for (const { table, field, foreignTrigger } of refs) {
    if (field.refTableId !== tableId) continue;
    const column = field.columnName;
    if (!foreignTrigger) writes.push(sql`UPDATE ${ctx.driver.table(table.sqlName)} SET ${sql.id(column)} = ${createdId} WHERE ${sql.id(column)} = ${tempId}`.compile(cat));
    for (const value of ['new_value', 'old_value'] as const) {
      writes.push(cat.updateTable('_wsmirror_outbox').set({ [value]: jsonSql(ctx, createdId) })
        .where('table_id', '=', table.tableId).where('column_name', '=', column)
        .where(value, '=', jsonSql(ctx, tempId)).compile());
    }
  }
  return writes;
}

/**
 * Of these rows (by temporary id), those created upstream already, with their upstream ids; the
 * references to them set since take the upstream id now, in one daemon transaction, and the
 * pending entries of the rows holding them are due at once. The others are left out: their
 * insert was discarded, their row was deleted before its create went out, or the id was typed in.
 */
export async function followCreatedRows(ctx: MirrorContext, rows: readonly { tableId: string; recordId: number }[]): Promise<CreatedRow[]> {
  assertOpen(ctx);
  const cat = ctx.driver.catalog(ctx.driver.db);
  const wanted = new Set(rows.map((r) => `${r.tableId}:${r.recordId}`));
  const created: CreatedRow[] = [];
  for (const chunk of chunks([...new Set(rows.map((r) => r.recordId))])) {
    const found = await cat.selectFrom('_wsmirror_created').select(['temp_id', 'table_id', 'created_id'])
      .where(ctx.dialect.idIn(sql.ref('temp_id'), chunk)).execute();
    for (const r of found) {
      const row = { tableId: r.table_id, tempId: Number(r.temp_id), createdId: Number(r.created_id) };
      // A temporary id of another table is no row of the one referenced.
      if (wanted.has(`${row.tableId}:${row.tempId}`)) created.push(row);
    }
  }
  if (created.length === 0) return [];
  const refs = referenceFields(await cachedTables(ctx));
  // The waiters first, while their rows still hold the temporary id that tells them.
  const writes = created.flatMap((row) => [...waitersDueNow(ctx, cat, refs, row.tableId, row.tempId), ...referenceWrites(ctx, cat, refs, row)]);
  await ctx.driver.write(async (tx) => tx.atCommit(writes));
  return created;
}
