import { sql } from 'kysely';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { chunks, decodeEntryValue } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';

/**
 * Each field's value before the earliest local edit of it still in the outbox, in any status, by
 * record: what a conflict check compares upstream's value with. A failed edit fixed by a later
 * one counts from the failed one (the fix's own value before is the refused value, which
 * upstream never held); so does a field edited again while in conflict.
 */
export async function readBaseValues(ctx: MirrorContext, tableId: string, recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>> {
  assertOpen(ctx);
  const out = new Map<number, Map<string, unknown>>();
  const info = (await cachedTables(ctx)).get(tableId);
  if (info === undefined || recordIds.length === 0) return out;
  const fieldOf = new Map(info.fields.map((f) => [f.fieldId, f]));
  const cat = ctx.driver.catalog(ctx.driver.db);
  for (const chunk of chunks(recordIds)) {
    const rows = await cat.selectFrom('_wsmirror_outbox').select(['record_id', 'field_id', 'old_value'])
      .where('table_id', '=', tableId).where('operation', '=', 'update').where(ctx.dialect.idIn(sql.ref('record_id'), chunk))
      .orderBy('entry_id').execute();
    for (const r of rows) {
      const field = r.field_id === null ? undefined : fieldOf.get(r.field_id);
      if (field === undefined) continue;
      const id = Number(r.record_id);
      let values = out.get(id);
      if (values === undefined) out.set(id, values = new Map());
      if (!values.has(field.fieldName)) values.set(field.fieldName, decodeEntryValue(ctx, field, r.old_value));
    }
  }
  return out;
}
