import { sql } from 'kysely';
import type { MirrorField } from '../catalog.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { isLocalReferenceField, localReference, rowKey, rowWaitedFor, type RowRef } from '../local-row-wait.ts';
import { ID_COLUMN } from '../naming.ts';
import type { WaitingEdit } from '../outbox.ts';
import { chunks, entryIdIn } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';

/** A reference column of a row that holds a negative id: the row inserted here it points at. */
type LocalReference = { field: MirrorField; target: RowRef };

/** A pending entry of a candidate record, as the decision reads it. */
interface EntryRow {
  record_id: unknown;
  operation: string;
  column_name: string | null;
  field_id: string | null;
}

/**
 * The records whose pending edits wait for a row inserted here to be created upstream, read from
 * the outbox and the rows by the rule the push applies to the edits it reads
 * (local-row-wait.ts; waiting-entries.ts makes them due once that row's fate is known), so a
 * wait shows before a push has met it. An update of a row inserted here whose insert is not
 * pending (refused) waits for that row's own create, which only a retry sends. The row waited for must have its insert in the outbox, in any status: a reference to a row
 * without one (its insert discarded, the id typed in) is failed by the next push instead. A
 * record with a pending delete waits for nothing. Read-only; one statement when the outbox holds
 * no insert, and the indexes of reference columns find the rows that point at local rows.
 */
export async function waitingEdits(ctx: MirrorContext): Promise<WaitingEdit[]> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  const inserting = new Set((await cat.selectFrom('_wsmirror_outbox').select('table_id').distinct()
    .where('operation', '=', 'insert').execute()).map((r) => r.table_id));
  if (inserting.size === 0) return [];
  const tables = await cachedTables(ctx);

  /** Candidate records by table: record id → its reference columns holding a negative id, in field order. */
  const candidates = new Map<string, Map<number, LocalReference[]>>();
  const candidate = (tableId: string, recordId: number) => {
    let records = candidates.get(tableId);
    if (records === undefined) candidates.set(tableId, records = new Map());
    let targets = records.get(recordId);
    if (targets === undefined) records.set(recordId, targets = []);
    return targets;
  };
  // Rows inserted here with pending edits but no pending insert or delete: their insert was refused.
  const ownRows = await cat.selectFrom('_wsmirror_outbox').select(['table_id', 'record_id'])
    .where('status', '=', 'pending').where('record_id', '<', 0)
    .groupBy(['table_id', 'record_id'])
    .having(sql<number>`sum(CASE WHEN ${sql.ref('operation')} = 'update' THEN 0 ELSE 1 END)`, '=', 0)
    .execute();
  for (const r of ownRows) if (tables.has(r.table_id)) candidate(r.table_id, Number(r.record_id));
  for (const info of tables.values()) {
    // A table whose SQL table is missing has no rows to point anywhere (its edits wait for its resync).
    if (info.missing) continue;
    const refs = info.fields.filter((f) => isLocalReferenceField(f) && inserting.has(f.refTableId!));
    for (const { recordId, field, target } of await negativeReferences(ctx, info, refs)) candidate(info.table.tableId, recordId).push({ field, target });
  }

  const waits: WaitingEdit[] = [];
  for (const [tableId, records] of candidates) {
    const entries = await pendingEntries(ctx, tableId, [...records.keys()]);
    for (const [recordId, targets] of records) {
      const own = entries.get(recordId) ?? [];
      const waitsFor = blockerOf({ tableId, recordId }, own, targets);
      if (waitsFor !== undefined) waits.push({ tableId, recordId, waitsFor, entries: own.length });
    }
  }
  // A row's insert entry has minus its id.
  const inserts = new Set<string>();
  for (const chunk of chunks([...new Set(waits.map((w) => -w.waitsFor.recordId))])) {
    const rows = await cat.selectFrom('_wsmirror_outbox').select(['table_id', 'record_id'])
      .where(entryIdIn(ctx, chunk)).where('operation', '=', 'insert').execute();
    for (const r of rows) inserts.add(rowKey({ tableId: r.table_id, recordId: Number(r.record_id) }));
  }
  return waits.filter((w) => inserts.has(rowKey(w.waitsFor)));
}

/**
 * The row a record's pending entries wait for (local-row-wait.ts): the entries fold into a
 * delete, a create (an insert among them) or an update; a create's references are its row's, in
 * field order, an update's those of the fields its entries changed, in capture order.
 */
function blockerOf(record: RowRef, entries: readonly EntryRow[], targets: readonly LocalReference[]): RowRef | undefined {
  if (entries.length === 0) return undefined;
  const operation = entries.some((e) => e.operation === 'delete') ? 'delete' : entries.some((e) => e.operation === 'insert') ? 'create' : 'update';
  // An entry belongs to its field by field id; entries of older mirrors hold none, only the column.
  const changed = (e: EntryRow) => targets.find(({ field }) => (e.field_id === null ? e.column_name === field.columnName : e.field_id === field.fieldId));
  const references = operation === 'create' ? targets : entries.filter((e) => e.operation === 'update').map(changed);
  return rowWaitedFor(record, operation, references.map((t) => t?.target));
}

/** The rows of a table whose columns `refs` hold a negative id (a row inserted here), one per column. */
async function negativeReferences(
  ctx: MirrorContext, info: TableInfo, refs: readonly MirrorField[],
): Promise<(LocalReference & { recordId: number })[]> {
  if (refs.length === 0) return [];
  const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...refs.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
  const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${ctx.driver.table(info.table.sqlName)}
    WHERE ${sql.join(refs.map((f) => sql`${sql.id(f.columnName)} < 0`), sql` OR `)}`.execute(ctx.driver.db);
  return rows.flatMap((row) => refs.flatMap((field, j) => {
    const target = localReference(field, Number(row[`c${j + 1}`]));
    return target === undefined ? [] : [{ recordId: Number(row['c0']), field, target }];
  }));
}

/** The pending entries of these records of a table, by record, in capture order. */
async function pendingEntries(ctx: MirrorContext, tableId: string, recordIds: readonly number[]): Promise<Map<number, EntryRow[]>> {
  const d = ctx.driver;
  const byRecord = new Map<number, EntryRow[]>();
  for (const chunk of chunks(recordIds)) {
    const rows = await d.catalog(d.db).selectFrom('_wsmirror_outbox').select(['record_id', 'operation', 'column_name', 'field_id'])
      .where('status', '=', 'pending').where('table_id', '=', tableId).where(ctx.dialect.idIn(sql.ref('record_id'), chunk))
      .orderBy('entry_id').execute();
    for (const r of rows) {
      const list = byRecord.get(Number(r.record_id));
      if (list) list.push(r);
      else byRecord.set(Number(r.record_id), [r]);
    }
  }
  return byRecord;
}
