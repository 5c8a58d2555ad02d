import { sql } from 'kysely';
import type { MirrorField } from '../catalog.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { PendingEdit } from '../outbox.ts';
import { sqlToApi } from '../value-codec.ts';
import { chunks, decodeEntryValue } from './outbox-rows.ts';
import { readCatalog } from './read-catalog.ts';

interface EntryRow {
  entry_id: unknown;
  record_id: unknown;
  operation: string;
  column_name: string | null;
  old_value: unknown;
  new_value: unknown;
  changed_at: unknown;
  attempts: number;
  sending_since: unknown;
}

/**
 * Pending edits due at `now`, one per record, oldest first, at most `limit` records. Read-only:
 * the entries of a record are folded into one create, update or delete, with the row's current
 * values decoded to API shapes. Entries of tables no longer mirrored are left out.
 */
export async function readPendingEdits(ctx: MirrorContext, options: { now: string; limit: number }): Promise<PendingEdit[]> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  const catalog = await readCatalog(ctx);
  const tables = ctx.tables!;
  const due = (q: ReturnType<typeof cat.selectFrom<'_wsmirror_outbox'>>) => q
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]))
    .where('table_id', 'in', catalog.tables.length > 0 ? catalog.tables.map((t) => t.tableId) : ['']);
  const records = await due(cat.selectFrom('_wsmirror_outbox'))
    .select((eb) => ['table_id', 'record_id', eb.fn.min('entry_id').as('first')])
    .groupBy(['table_id', 'record_id'])
    .orderBy('first')
    .limit(Math.max(0, Math.floor(options.limit)))
    .execute();

  const byTable = new Map<string, number[]>();
  for (const r of records) {
    const list = byTable.get(r.table_id) ?? [];
    list.push(Number(r.record_id));
    byTable.set(r.table_id, list);
  }
  const edits: { first: number; edit: PendingEdit }[] = [];
  for (const [tableId, ids] of byTable) {
    const info = tables.get(tableId)!;
    for (const chunk of chunks(ids)) {
      const entries = await due(cat.selectFrom('_wsmirror_outbox'))
        .select(['entry_id', 'record_id', 'operation', 'column_name', 'old_value', 'new_value', 'changed_at', 'attempts', 'sending_since'])
        .where('table_id', '=', tableId).where('record_id', 'in', chunk).orderBy('entry_id').execute();
      const rows = await currentRows(ctx, info, chunk);
      const grouped = new Map<number, EntryRow[]>();
      for (const e of entries) {
        const id = Number(e.record_id);
        const list = grouped.get(id) ?? [];
        list.push(e);
        grouped.set(id, list);
      }
      for (const [recordId, list] of grouped) {
        edits.push({ first: Number(list[0]!.entry_id), edit: fold(ctx, info, recordId, list, rows.get(recordId)) });
      }
    }
  }
  return edits.sort((a, b) => a.first - b.first).map((e) => e.edit);
}

/** Current values of rows by id (API shapes, writable fields only). */
async function currentRows(ctx: MirrorContext, info: TableInfo, ids: readonly number[]): Promise<Map<number, Map<string, unknown>>> {
  const writable = info.fields.filter((f) => !f.readOnly);
  const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...writable.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
  const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${ctx.driver.table(info.table.sqlName)}
    WHERE ${sql.id(ID_COLUMN)} IN (${sql.join([...ids])})`.execute(ctx.driver.db);
  const out = new Map<number, Map<string, unknown>>();
  for (const row of rows) {
    const values = new Map<string, unknown>();
    writable.forEach((f, j) => {
      const raw = row[`c${j + 1}`];
      let value: unknown;
      try {
        value = sqlToApi(f.fieldType, raw, ctx.dialect.name);
      } catch {
        // A value typed by hand that does not fit its type: sent as stored, upstream judges it.
        value = raw;
      }
      values.set(f.fieldName, value);
    });
    out.set(Number(row['c0']), values);
  }
  return out;
}

function fold(ctx: MirrorContext, info: TableInfo, recordId: number, entries: readonly EntryRow[], row: Map<string, unknown> | undefined): PendingEdit {
  const byColumn = new Map<string, MirrorField>(info.fields.map((f) => [f.columnName, f]));
  const entryIds = entries.map((e) => Number(e.entry_id));
  const changedAt = entries.map((e) => ctx.driver.fromTimestamp(e.changed_at) ?? '').sort();
  const sending = entries.map((e) => ctx.driver.fromTimestamp(e.sending_since)).filter((s): s is string => s !== null).sort();
  const base = {
    tableId: info.table.tableId,
    recordId,
    entryIds,
    firstChangedAt: changedAt[0] ?? '',
    attempts: Math.max(...entries.map((e) => Number(e.attempts))),
    sendingSince: sending.at(-1) ?? null,
  };
  const hasInsert = entries.some((e) => e.operation === 'insert');
  if (entries.some((e) => e.operation === 'delete')) {
    // A delete of a row created here cancels out: a negative id tells the push to send nothing.
    return { ...base, operation: 'delete', values: new Map(), oldValues: new Map(), fieldEntryIds: new Map() };
  }
  const values = new Map<string, unknown>();
  const oldValues = new Map<string, unknown>();
  const fieldEntryIds = new Map<string, number[]>();
  for (const e of entries) {
    if (e.operation !== 'update' || e.column_name === null) continue;
    const field = byColumn.get(e.column_name);
    if (!field || field.readOnly) continue;
    const ids = fieldEntryIds.get(field.fieldName) ?? [];
    ids.push(Number(e.entry_id));
    fieldEntryIds.set(field.fieldName, ids);
    if (!oldValues.has(field.fieldName) && !hasInsert) oldValues.set(field.fieldName, decodeEntryValue(ctx, field, e.old_value));
    values.set(field.fieldName, row?.has(field.fieldName) ? row.get(field.fieldName) : decodeEntryValue(ctx, field, e.new_value));
  }
  if (hasInsert) {
    // A create sends every writable value the row holds, later updates included.
    for (const [name, value] of row ?? []) if (value !== null) values.set(name, value);
    return { ...base, operation: 'create', values, oldValues: new Map(), fieldEntryIds };
  }
  return { ...base, operation: 'update', values, oldValues, fieldEntryIds };
}
