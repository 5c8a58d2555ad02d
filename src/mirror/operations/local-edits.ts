import { sql } from 'kysely';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';

/**
 * What the pull must leave alone in a batch of rows: records with outbox entries in any status
 * (pending, failed, conflict). A local insert or delete protects the whole row; updates protect
 * their field's column only (found by field id: a field renamed upstream keeps its edits, one
 * deleted and made again under the same name does not inherit them), so upstream's changes to
 * other columns still arrive.
 */
export interface LocalEdits {
  wholeRows: Set<number>;
  columns: Map<number, Set<string>>;
}

const IDS_PER_QUERY = 1_000;

/** Local edits among `ids` of one table: one cheap probe, then one query per 1,000 ids when the table has any. */
export async function localEditsOf(ctx: MirrorContext, tx: WriteTx, info: TableInfo, ids: readonly number[]): Promise<LocalEdits | undefined> {
  if (ids.length === 0) return undefined;
  const tableId = info.table.tableId;
  const cat = ctx.driver.catalog(tx.db);
  const any = await cat.selectFrom('_wsmirror_outbox').select(sql<number>`1`.as('one')).where('table_id', '=', tableId).limit(1).executeTakeFirst();
  if (!any) return undefined;
  const edits: LocalEdits = { wholeRows: new Set(), columns: new Map() };
  const columnOf = new Map(info.fields.map((f) => [f.fieldId, f.columnName]));
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const rows = await cat.selectFrom('_wsmirror_outbox').select(['record_id', 'operation', 'column_name', 'field_id'])
      .where('table_id', '=', tableId).where('record_id', 'in', ids.slice(i, i + IDS_PER_QUERY)).execute();
    for (const r of rows) {
      const id = Number(r.record_id);
      if (r.operation !== 'update' || r.column_name === null) {
        edits.wholeRows.add(id);
        continue;
      }
      // An entry of a field no longer mirrored protects nothing (its column is gone or another's).
      const column = r.field_id === null ? r.column_name : columnOf.get(r.field_id);
      if (column === undefined) continue;
      let set = edits.columns.get(id);
      if (!set) edits.columns.set(id, (set = new Set()));
      set.add(column);
    }
  }
  return edits.wholeRows.size === 0 && edits.columns.size === 0 ? undefined : edits;
}
