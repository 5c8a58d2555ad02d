import { sql } from 'kysely';
import type { CompiledQuery, Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';

/**
 * Edits of a row inserted here, and of the rows whose references point at it, wait while it is
 * not created upstream (local-row-wait.ts). When its fate is known (created, or its
 * insert discarded) they are made due at once, without the wait's error: the next round sends
 * them, or fails them naming the row.
 */

/**
 * The reference fields of the mirrored tables, each with its table: where rows point at others.
 * A table whose SQL table is missing has no rows to point anywhere; `foreignTrigger`: the rows of
 * its table may be read, not written (TableInfo.foreignTrigger).
 */
export function referenceFields(tables: ReadonlyMap<string, TableInfo>) {
  return [...tables.values()].flatMap(({ table, fields, missing, foreignTrigger }) => (missing ? [] :
    fields.filter((f) => f.fieldType === 'reference' && f.refTableId !== null).map((f) => ({ table, field: f, foreignTrigger }))));
}

/** Statements making due the pending entries of local row `tempId` of `tableId` and of the rows pointing at it. */
export function waitersDueNow(
  ctx: MirrorContext, cat: Kysely<CatalogDb>, refs: ReturnType<typeof referenceFields>, tableId: string, tempId: number,
): CompiledQuery[] {
  const writes = [dueNow(cat).where('table_id', '=', tableId).where('record_id', '=', tempId).compile()];
  for (const { table, field } of refs) {
    if (field.refTableId !== tableId) continue;
    const pointing = sql`SELECT ${sql.id(ID_COLUMN)} FROM ${ctx.driver.table(table.sqlName)} WHERE ${sql.id(field.columnName)} = ${tempId}`;
    writes.push(dueNow(cat).where('table_id', '=', table.tableId).where(sql<boolean>`${sql.ref('record_id')} IN (${pointing})`).compile());
  }
  return writes;
}

/** Pending entries made due now, without the error of the wait they leave (narrowed by the caller). */
function dueNow(cat: Kysely<CatalogDb>) {
  return cat.updateTable('_wsmirror_outbox').set({ next_attempt_at: null, last_error: null }).where('status', '=', 'pending');
}
