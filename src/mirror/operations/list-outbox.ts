import type { OutboxStatus } from '../catalog-tables.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { OutboxEntry, OutboxFilter, OutboxOperation } from '../outbox.ts';
import { decodeEntryValue, filtered } from './outbox-rows.ts';
import { readCatalog } from './read-catalog.ts';

/** Outbox entries in capture order, values decoded, for `wsmirror outbox`. */
export async function listOutbox(ctx: MirrorContext, filter: OutboxFilter): Promise<OutboxEntry[]> {
  assertOpen(ctx);
  const catalog = await readCatalog(ctx);
  const fieldOf = new Map(catalog.fields.map((f) => [`${f.tableId}\u0000${f.fieldId}`, f]));
  const d = ctx.driver;
  const rows = await filtered(d.catalog(d.db).selectFrom('_wsmirror_outbox').selectAll(), filter).orderBy('entry_id').execute();
  return rows.map((r) => {
    const field = r.field_id === null ? undefined : fieldOf.get(`${r.table_id}\u0000${r.field_id}`);
    return {
      entryId: Number(r.entry_id),
      tableId: r.table_id,
      sqlTable: r.sql_table,
      recordId: Number(r.record_id),
      operation: r.operation as OutboxOperation,
      columnName: r.column_name,
      fieldName: field?.fieldName ?? null,
      oldValue: decodeEntryValue(ctx, field, r.old_value),
      newValue: decodeEntryValue(ctx, field, r.new_value),
      changedAt: d.fromTimestamp(r.changed_at) ?? '',
      status: r.status as OutboxStatus,
      attempts: Number(r.attempts),
      lastError: r.last_error,
      nextAttemptAt: d.fromTimestamp(r.next_attempt_at),
    };
  });
}

/** The earliest `changed_at` of pending entries, null when none. */
export async function oldestPendingAt(ctx: MirrorContext): Promise<string | null> {
  assertOpen(ctx);
  const d = ctx.driver;
  const row = await d.catalog(d.db).selectFrom('_wsmirror_outbox').select((eb) => eb.fn.min('changed_at').as('oldest'))
    .where('status', '=', 'pending').executeTakeFirst();
  return d.fromTimestamp(row?.oldest ?? null);
}
