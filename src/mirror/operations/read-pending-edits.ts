import { sql } from 'kysely';
import type { SelectQueryBuilder } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { PendingEdit, ReadPendingOptions } from '../outbox.ts';
import { entryFields, foldEntries, notMirrored, type CurrentRows, type EntryFields, type EntryRow } from './fold-entries.ts';
import { chunks } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';


/** Current rows are read this many ids at a time (one bound parameter each: see Dialect.idIn). */
const ROWS_PER_READ = 5_000;

type OutboxEntries = SelectQueryBuilder<CatalogDb, '_wsmirror_outbox', EntryRow>;

const ENTRY_COLUMNS = ['entry_id', 'table_id', 'sql_table', 'record_id', 'operation', 'column_name', 'field_id', 'old_value', 'new_value', 'attempts', 'sending_since', 'retried_at', 'next_attempt_at'] as const;

/**
 * The records with an entry due at `now`, one edit each, oldest first, at most `limit` records;
 * with `after`, only records whose first due entry comes after that entry id. Changes no entry
 * (the first read of a push may refresh the planner's statistics of the outbox). Each edit
 * folds ALL the record's pending entries, due or still backing off, in capture order, into one
 * create, update or delete, with the row's current values decoded to API shapes: a record's
 * entries go together, so an older edit backing off after a failed send never goes after a
 * newer one (and wins), and a delete captured meanwhile cancels a create still backing off.
 * An update entry belongs to its field by field id, whatever the field or its column is called
 * now. Entries that cannot be sent (of a table or field no longer mirrored, or computed upstream
 * now, or a value JSON cannot carry) come as `unsendable`.
 *
 * A read costs in proportion to the records it returns, not to the outbox: it walks the due
 * entries in capture order from `after` (the primary key) until it has seen `limit` records,
 * then looks up by record (the `(table_id, record_id)` index) the pending entries of those
 * records outside that walk. A record with a due entry at or before `after` belongs to an
 * earlier read and is left out. Grouping the whole outbox by record instead made each read of a
 * push round cost as much as reading all of it.
 */
export async function readPendingEdits(ctx: MirrorContext, options: ReadPendingOptions): Promise<PendingEdit[]> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  // The cached catalog, not a fresh read: a push reads the outbox several times in a row.
  const tables = await cachedTables(ctx);
  const limit = Math.floor(options.limit);
  if (limit <= 0) return [];
  let pending: OutboxEntries = cat.selectFrom('_wsmirror_outbox').select(ENTRY_COLUMNS).where('status', '=', 'pending');
  if (options.exceptTables !== undefined && options.exceptTables.length > 0) pending = pending.where('table_id', 'not in', [...options.exceptTables]);
  const due = pending.where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]));
  const isDue = (e: EntryRow) => e.next_attempt_at === null || String(d.fromTimestamp(e.next_attempt_at) ?? '') <= options.now;

  // Records in the order of their first due entry, with all their pending entries in capture order.
  const byRecord = new Map<string, EntryRow[]>();
  /** Each record's first due entry: where the walk found it. */
  const firstDue = new Map<string, number>();
  /** The current rows of the records read, by table. */
  const rowsByTable = new Map<string, CurrentRows>();
  /** Records with a due entry at or before `after`: an earlier read's, skipped. */
  const earlier = new Set<string>();
  const after = options.after ?? 0;
  let walked = after;
  for (let first = true; ; first = false) {
    const window: EntryRow[] = await due.where('entry_id', '>', walked).orderBy('entry_id').limit(limit).execute();
    // The first read of a push, and the outbox holds a round at least: a bulk edit may have just
    // filled it, before the planner knows (checked only then, not on every cycle's empty read).
    if (first && options.after === undefined && window.length === limit) await d.refreshOutboxStatistics();
    const added = new Map<string, EntryRow[]>();
    for (const e of window) {
      const key = recordKey(e);
      // A record of an earlier window already has all its pending entries (looked up below).
      if (byRecord.has(key)) continue;
      const list = added.get(key);
      if (list) list.push(e);
      else if (!earlier.has(key) && byRecord.size + added.size < limit) {
        added.set(key, [e]);
        firstDue.set(key, Number(e.entry_id));
      }
    }
    if (window.length > 0) walked = Number(window[window.length - 1]!.entry_id);
    // A window shorter than asked for reached the last due entry: nothing follows it.
    const reachedEnd = window.length < limit;
    // One look-up by record for the new records: their pending entries outside the window, due
    // or not (a due one at or before `after` hands the record to an earlier read). The new
    // records' current rows are read at the same time, on another connection of a Postgres pool
    // (a record the look-up hands to an earlier read is then read for nothing).
    // Outside the window are: entries at or before `after`, entries after the walk, and entries
    // not due (a record's due entries in between are in the window: it was added at its first).
    const outside = pending.where((eb) => eb.or([
      eb('entry_id', '<=', after), eb('entry_id', '>', walked), eb('next_attempt_at', '>', options.now),
    ]));
    const [, others] = await Promise.all([
      readCurrentRows(ctx, tables, rowsByTable, recordIdsByTable(added, isLocalInsert)),
      added.size > 0 ? entriesOf(ctx, outside, added) : [],
    ]);
    for (const e of others) {
      const key = recordKey(e);
      if (!added.has(key)) continue;
      if (Number(e.entry_id) <= after && isDue(e)) {
        added.delete(key);
        earlier.add(key);
      } else {
        added.get(key)!.push(e);
      }
    }
    for (const [key, list] of added) byRecord.set(key, others.length === 0 ? list : list.sort((a, b) => Number(a.entry_id) - Number(b.entry_id)));
    if (reachedEnd || byRecord.size >= limit) break;
  }

  const fieldsByTable = new Map<string, EntryFields>();
  const edits: PendingEdit[] = [];
  for (const list of byRecord.values()) {
    const tableId = list[0]!.table_id;
    const recordId = Number(list[0]!.record_id);
    const info = tables.get(tableId);
    if (info === undefined) {
      edits.push(notMirrored(tableId, recordId, list, firstDue.get(recordKey(list[0]!))!));
      continue;
    }
    let fieldOf = fieldsByTable.get(tableId);
    if (fieldOf === undefined) fieldsByTable.set(tableId, fieldOf = entryFields(info.fields));
    const current = rowsByTable.get(tableId);
    edits.push(foldEntries(ctx, info, fieldOf, recordId, list, current, current?.byId.get(recordId), firstDue.get(recordKey(list[0]!))!));
  }
  return edits;
}

function recordKey(e: EntryRow): string {
  return `${e.table_id}:${String(e.record_id)}`;
}

/** The entries of these records that `entries` selects, in capture order. */
async function entriesOf(ctx: MirrorContext, entries: OutboxEntries, records: ReadonlyMap<string, readonly EntryRow[]>): Promise<EntryRow[]> {
  const out: EntryRow[] = [];
  for (const [tableId, ids] of recordIdsByTable(records)) {
    for (const chunk of chunks(ids, ROWS_PER_READ)) {
      out.push(...await entries.where('table_id', '=', tableId).where(ctx.dialect.idIn(sql.ref('record_id'), chunk)).orderBy('entry_id').execute());
    }
  }
  return out;
}

function recordIdsByTable(byRecord: ReadonlyMap<string, readonly EntryRow[]>, which: (e: EntryRow) => boolean = () => true): Map<string, number[]> {
  const idsByTable = new Map<string, number[]>();
  for (const [first] of byRecord.values()) {
    if (!which(first!)) continue;
    const ids = idsByTable.get(first!.table_id);
    if (ids) ids.push(Number(first!.record_id));
    else idsByTable.set(first!.table_id, [Number(first!.record_id)]);
  }
  return idsByTable;
}

/**
 * A row inserted here and not created upstream yet: its id is minus its insert entry's id. Only
 * these rows are read: a create sends the values the row holds, an update the values its entries
 * captured (the row's may have been read again from upstream since, see `fold`).
 */
function isLocalInsert(e: EntryRow): boolean {
  return Number(e.record_id) < 0;
}


/** Adds the current rows (writable fields only) of these records to `rowsByTable`. */
async function readCurrentRows(
  ctx: MirrorContext, tables: ReadonlyMap<string, TableInfo>, rowsByTable: Map<string, CurrentRows>, idsByTable: ReadonlyMap<string, readonly number[]>,
): Promise<void> {
  for (const [tableId, ids] of idsByTable) {
    const info = tables.get(tableId);
    // A table no longer mirrored has no rows to read (its edits are unsendable).
    if (info === undefined) continue;
    let current = rowsByTable.get(tableId);
    if (current === undefined) {
      const writable = info.fields.filter((f) => !f.readOnly);
      current = { writable, keys: writable.map((_, j) => `c${j + 1}`), position: new Map(writable.map((f, j) => [f.fieldName, j])), byId: new Map() };
      rowsByTable.set(tableId, current);
    }
    const { writable, keys, byId } = current;
    const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...writable.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(keys[j]!)}`)];
    for (const chunk of chunks(ids, ROWS_PER_READ)) {
      const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${ctx.driver.table(info.table.sqlName)}
        WHERE ${ctx.dialect.idIn(sql.id(ID_COLUMN), chunk)}`.execute(ctx.driver.db);
      for (const row of rows) byId.set(Number(row['c0']), row);
    }
  }
}
