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
  table_id: string;
  record_id: unknown;
  operation: string;
  column_name: string | null;
  old_value: unknown;
  new_value: unknown;
  changed_at: unknown;
  attempts: number;
  sending_since: unknown;
}

/** Current rows are read this many ids at a time (one bound parameter each: see Dialect.idSet). */
const ROWS_PER_READ = 5_000;

/**
 * Pending edits due at `now`, one per record, oldest first, at most `limit` records. Read-only:
 * the entries of a record are folded into one create, update or delete, with the row's current
 * values decoded to API shapes. Entries of tables no longer mirrored are left out.
 *
 * One query reads the due entries of the first `limit` records (in capture order), then one
 * query per table and few thousand ids reads the rows' current values.
 */
export async function readPendingEdits(ctx: MirrorContext, options: { now: string; limit: number; after?: number }): Promise<PendingEdit[]> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  const catalog = await readCatalog(ctx);
  const tables = ctx.tables!;
  if (catalog.tables.length === 0 || options.limit <= 0) return [];
  const dueRecords = cat.selectFrom('_wsmirror_outbox')
    .select((eb) => ['table_id', 'record_id', eb.fn.min('entry_id').as('first')])
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]))
    .where('table_id', 'in', catalog.tables.map((t) => t.tableId))
    .groupBy(['table_id', 'record_id'])
    .$if(options.after !== undefined, (q) => q.having((eb) => eb(eb.fn.min('entry_id'), '>', options.after!)))
    .orderBy('first')
    .limit(Math.floor(options.limit))
    .as('r');
  const entries: EntryRow[] = await cat.selectFrom('_wsmirror_outbox as o')
    .innerJoin(dueRecords, (join) => join.onRef('r.table_id', '=', 'o.table_id').onRef('r.record_id', '=', 'o.record_id'))
    .select(['o.entry_id', 'o.table_id', 'o.record_id', 'o.operation', 'o.column_name', 'o.old_value', 'o.new_value', 'o.changed_at', 'o.attempts', 'o.sending_since'])
    .where('o.status', '=', 'pending')
    .where((eb) => eb.or([eb('o.next_attempt_at', 'is', null), eb('o.next_attempt_at', '<=', options.now)]))
    .orderBy('r.first').orderBy('o.entry_id')
    .execute();

  // Records in the order of their first entry; each table's records for reading their rows.
  const byRecord = new Map<string, EntryRow[]>();
  const idsByTable = new Map<string, number[]>();
  for (const e of entries) {
    const key = `${e.table_id}:${String(e.record_id)}`;
    const list = byRecord.get(key);
    if (list) {
      list.push(e);
      continue;
    }
    byRecord.set(key, [e]);
    const ids = idsByTable.get(e.table_id);
    if (ids) ids.push(Number(e.record_id));
    else idsByTable.set(e.table_id, [Number(e.record_id)]);
  }
  const rowsByTable = new Map<string, Map<number, Map<string, unknown>>>();
  const columnsByTable = new Map<string, Map<string, MirrorField>>();
  for (const [tableId, ids] of idsByTable) {
    const info = tables.get(tableId)!;
    const rows = new Map<number, Map<string, unknown>>();
    for (const chunk of chunks(ids, ROWS_PER_READ)) await readCurrentRows(ctx, info, chunk, rows);
    rowsByTable.set(tableId, rows);
    columnsByTable.set(tableId, new Map(info.fields.map((f) => [f.columnName, f])));
  }
  const edits: PendingEdit[] = [];
  for (const list of byRecord.values()) {
    const tableId = list[0]!.table_id;
    const recordId = Number(list[0]!.record_id);
    edits.push(fold(ctx, tables.get(tableId)!, columnsByTable.get(tableId)!, recordId, list, rowsByTable.get(tableId)!.get(recordId)));
  }
  return edits;
}

/** Current values of rows by id (API shapes, writable fields only), added to `out`. */
async function readCurrentRows(ctx: MirrorContext, info: TableInfo, ids: readonly number[], out: Map<number, Map<string, unknown>>): Promise<void> {
  const writable = info.fields.filter((f) => !f.readOnly);
  const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...writable.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
  const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${ctx.driver.table(info.table.sqlName)}
    WHERE ${sql.id(ID_COLUMN)} IN ${ctx.dialect.idSet(ids)}`.execute(ctx.driver.db);
  for (const row of rows) {
    const values = new Map<string, unknown>();
    for (let j = 0; j < writable.length; j++) {
      const f = writable[j]!;
      const raw = row[`c${j + 1}`];
      let value: unknown;
      try {
        value = sqlToApi(f.fieldType, raw, ctx.dialect.name);
      } catch {
        // A value typed by hand that does not fit its type: sent as stored, upstream judges it.
        value = raw;
      }
      values.set(f.fieldName, value);
    }
    out.set(Number(row['c0']), values);
  }
}

function fold(
  ctx: MirrorContext, info: TableInfo, byColumn: ReadonlyMap<string, MirrorField>, recordId: number, entries: readonly EntryRow[], row: Map<string, unknown> | undefined,
): PendingEdit {
  const entryIds = entries.map((e) => Number(e.entry_id));
  const changedAt = entries.map((e) => ctx.driver.fromTimestamp(e.changed_at) ?? '').sort();
  const sending = entries.map((e) => ctx.driver.fromTimestamp(e.sending_since)).filter((s): s is string => s !== null).sort();
  const insert = entries.find((e) => e.operation === 'insert');
  const sentBody = insert !== undefined && insert.sending_since !== null && insert.new_value !== null
    ? (decodeEntryValue(ctx, undefined, insert.new_value) as Record<string, unknown>)
    : null;
  const base = {
    tableId: info.table.tableId,
    recordId,
    entryIds,
    firstChangedAt: changedAt[0] ?? '',
    attempts: Math.max(...entries.map((e) => Number(e.attempts))),
    sendingSince: sending.at(-1) ?? null,
    sentEntryIds: entries.filter((e) => e.sending_since !== null).map((e) => Number(e.entry_id)),
    sentBody,
  };
  const hasInsert = insert !== undefined;
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
