import { sql } from 'kysely';
import type { MirrorField } from '../catalog.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { chunks, decodeEntryValue } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';

/**
 * Each field's value before the local edits of it still in the outbox, in any status, by record:
 * what a conflict check compares upstream's value with. The entries of a field form a chain while
 * each one's value before is the value the one before it wrote: a failed edit fixed by a later
 * one counts from the failed one (the fix's own value before is the refused value, which upstream
 * never held), and so does a field edited again while in conflict. A link that does not follow
 * (an edit in between reached upstream and left the outbox, or the pull wrote the column) starts
 * the chain again from that entry's value before.
 */
export async function readBaseValues(ctx: MirrorContext, tableId: string, recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>> {
  assertOpen(ctx);
  const out = new Map<number, Map<string, unknown>>();
  const info = (await cachedTables(ctx)).get(tableId);
  if (info === undefined || recordIds.length === 0) return out;
  const fieldOf = new Map(info.fields.map((f) => [f.fieldId, f]));
  const cat = ctx.driver.catalog(ctx.driver.db);
  for (const chunk of chunks(recordIds)) {
    const rows = await cat.selectFrom('_wsmirror_outbox').select(['record_id', 'field_id', 'old_value', 'new_value'])
      .where('table_id', '=', tableId).where('operation', '=', 'update').where(ctx.dialect.idIn(sql.ref('record_id'), chunk))
      .orderBy('entry_id').execute();
    /** Per record and field: the stored value before the chain, and the value its last link wrote. */
    const chains = new Map<string, { recordId: number; field: MirrorField; before: unknown; last: unknown }>();
    for (const r of rows) {
      const field = r.field_id === null ? undefined : fieldOf.get(r.field_id);
      if (field === undefined) continue;
      const key = `${String(r.record_id)}\u0000${field.fieldId}`;
      const chain = chains.get(key);
      if (chain === undefined) chains.set(key, { recordId: Number(r.record_id), field, before: r.old_value, last: r.new_value });
      else {
        if (!sameStored(chain.last, r.old_value)) chain.before = r.old_value;
        chain.last = r.new_value;
      }
    }
    for (const { recordId, field, before } of chains.values()) {
      let values = out.get(recordId);
      if (values === undefined) out.set(recordId, values = new Map());
      values.set(field.fieldName, decodeEntryValue(ctx, field, before));
    }
  }
  return out;
}

/** Two stored values alike (JSON text on SQLite, parsed jsonb on Postgres). */
function sameStored(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
