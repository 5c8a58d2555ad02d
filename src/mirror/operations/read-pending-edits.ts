import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { MirrorField } from '../catalog.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { PendingEdit } from '../outbox.ts';
import { sqlToApi } from '../value-codec.ts';
import { valueKindOf } from '../value-kind.ts';
import { chunks, decodeEntryValue, storedSqlValue } from './outbox-rows.ts';
import { cachedTables } from './read-catalog.ts';

interface EntryRow {
  entry_id: unknown;
  table_id: string;
  record_id: unknown;
  operation: string;
  column_name: string | null;
  field_id: string | null;
  old_value: unknown;
  new_value: unknown;
  attempts: number;
  sending_since: unknown;
  retried_at: unknown;
}

/** Current rows are read this many ids at a time (one bound parameter each: see Dialect.idIn). */
const ROWS_PER_READ = 5_000;

type DueEntries = SelectQueryBuilder<CatalogDb, '_wsmirror_outbox', EntryRow>;
type OutboxWhere = ExpressionBuilder<CatalogDb, '_wsmirror_outbox'>;

const ENTRY_COLUMNS = ['entry_id', 'table_id', 'record_id', 'operation', 'column_name', 'field_id', 'old_value', 'new_value', 'attempts', 'sending_since', 'retried_at'] as const;

/**
 * Pending edits due at `now`, one per record, oldest first, at most `limit` records; with
 * `after`, only records whose first due entry comes after that entry id. Changes no entry (the
 * first read of a push may refresh the planner's statistics of the outbox): the entries of a
 * record are folded into one create, update or delete, with the row's current values
 * decoded to API shapes. An update entry belongs to its field by field id, whatever the field
 * or its column is called now. Entries that cannot be sent (of a table or field no longer
 * mirrored, or computed upstream now, or a value JSON cannot carry) come as `unsendable`.
 *
 * A read costs in proportion to the records it returns, not to the outbox: it walks the due
 * entries in capture order from `after` (the primary key) until it has seen `limit` records,
 * then looks up by record (the `(table_id, record_id)` index) the entries of those records
 * outside that walk. A record with an entry at or before `after` belongs to an earlier read and
 * is left out; one with entries after the walk gets them too. Grouping the whole outbox by
 * record instead made each read of a push round cost as much as reading all of it.
 */
export async function readPendingEdits(ctx: MirrorContext, options: { now: string; limit: number; after?: number }): Promise<PendingEdit[]> {
  assertOpen(ctx);
  const d = ctx.driver;
  const cat = d.catalog(d.db);
  // The cached catalog, not a fresh read: a push reads the outbox several times in a row.
  const tables = await cachedTables(ctx);
  const limit = Math.floor(options.limit);
  if (limit <= 0) return [];
  const due: DueEntries = cat.selectFrom('_wsmirror_outbox').select(ENTRY_COLUMNS)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', options.now)]));

  // Records in the order of their first entry, with their entries in capture order.
  const byRecord = new Map<string, EntryRow[]>();
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
      // A record of an earlier window already has its entries after that window (looked up below).
      if (byRecord.has(key)) continue;
      const list = added.get(key);
      if (list) list.push(e);
      else if (!earlier.has(key) && byRecord.size + added.size < limit) added.set(key, [e]);
    }
    if (window.length > 0) walked = Number(window[window.length - 1]!.entry_id);
    // A window shorter than asked for reached the last due entry: nothing follows it.
    const reachedEnd = window.length < limit;
    // One look-up by record for the new records: their entries at or before `after` (they belong
    // to an earlier read) and, unless the walk reached the end, those after the walk (appended:
    // later in capture order).
    const outside = [
      ...(after > 0 ? [(eb: OutboxWhere) => eb('entry_id', '<=', after)] : []),
      ...(reachedEnd ? [] : [(eb: OutboxWhere) => eb('entry_id', '>', walked)]),
    ];
    // The new records' current rows are read at the same time, on another connection of a
    // Postgres pool (a record the look-up hands to an earlier read is then read for nothing).
    const [, outsideEntries] = await Promise.all([
      readCurrentRows(ctx, tables, rowsByTable, recordIdsByTable(added, isLocalInsert)),
      added.size > 0 && outside.length > 0 ? entriesOf(ctx, due, added, (eb) => eb.or(outside.map((where) => where(eb)))) : [],
    ]);
    for (const e of outsideEntries) {
      const key = recordKey(e);
      if (Number(e.entry_id) <= after) {
        added.delete(key);
        earlier.add(key);
      } else {
        added.get(key)?.push(e);
      }
    }
    for (const [key, list] of added) byRecord.set(key, list);
    if (reachedEnd || byRecord.size >= limit) break;
  }

  const fieldsByTable = new Map<string, EntryFields>();
  const edits: PendingEdit[] = [];
  for (const list of byRecord.values()) {
    const tableId = list[0]!.table_id;
    const recordId = Number(list[0]!.record_id);
    const info = tables.get(tableId);
    if (info === undefined) {
      edits.push(notMirrored(tableId, recordId, list));
      continue;
    }
    let fieldOf = fieldsByTable.get(tableId);
    if (fieldOf === undefined) fieldsByTable.set(tableId, fieldOf = entryFields(info.fields));
    const current = rowsByTable.get(tableId);
    edits.push(fold(ctx, info, fieldOf, recordId, list, current, current?.byId.get(recordId)));
  }
  return edits;
}

function recordKey(e: EntryRow): string {
  return `${e.table_id}:${String(e.record_id)}`;
}

/** The due entries of these records that `where` selects, in capture order. */
async function entriesOf(
  ctx: MirrorContext, due: DueEntries, records: ReadonlyMap<string, readonly EntryRow[]>,
  where: (eb: OutboxWhere) => Expression<SqlBool>,
): Promise<EntryRow[]> {
  const out: EntryRow[] = [];
  for (const [tableId, ids] of recordIdsByTable(records)) {
    for (const chunk of chunks(ids, ROWS_PER_READ)) {
      out.push(...await due.where('table_id', '=', tableId).where(ctx.dialect.idIn(sql.ref('record_id'), chunk))
        .where(where).orderBy('entry_id').execute());
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

/** A table's rows as read for a round, decoded to API shapes only where a fold asks. */
interface CurrentRows {
  writable: readonly MirrorField[];
  /** Column aliases of `writable`, by position. */
  keys: readonly string[];
  /** Position in `writable` by field name. */
  position: ReadonlyMap<string, number>;
  byId: Map<number, Record<string, unknown>>;
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

/** A record's entries of a table no longer mirrored (deleted upstream, or left out by the table patterns). */
function notMirrored(tableId: string, recordId: number, entries: readonly EntryRow[]): PendingEdit {
  return {
    tableId, recordId, operation: 'update', entryIds: [], values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(),
    attempts: 0, sendingSince: null, sentEntryIds: [], sentBody: null,
    unsendable: [{
      entryIds: entries.map((e) => Number(e.entry_id)),
      message: `table ${tableId} is no longer mirrored (deleted upstream, or left out by tables.include/exclude); the edit was not sent`,
    }],
  };
}

/** A table's fields as its update entries name them: by field id, and by column for entries that hold none. */
interface EntryFields {
  byId: ReadonlyMap<string, MirrorField>;
  byColumn: ReadonlyMap<string, MirrorField>;
}

function entryFields(fields: readonly MirrorField[]): EntryFields {
  return { byId: new Map(fields.map((f) => [f.fieldId, f])), byColumn: new Map(fields.map((f) => [f.columnName, f])) };
}

/** Why an update entry cannot be sent to its field, or undefined when it can. */
function unsendableField(e: EntryRow, field: MirrorField | undefined): string | undefined {
  const column = JSON.stringify(e.column_name);
  if (field === undefined) return `column ${column}: its field no longer exists upstream (deleted, or deleted and made again); the edit was not sent`;
  if (field.readOnly) return `${field.fieldName}: the field is computed upstream now; the edit was not sent`;
  return undefined;
}

type Sendable = { value: unknown } | { refused: string };

/** Field types whose values are free text, where an empty string is a value (spec, "Value shapes"). */
const FREE_TEXT_TYPES: ReadonlySet<string> = new Set(['string', 'html', 'react', 'styled']);

/**
 * The API value of a SQL value of `field`; a value the codec cannot read goes as stored
 * (upstream judges it) if JSON carries it as it is, and is otherwise refused with the codec's reason.
 */
function sendable(ctx: MirrorContext, field: MirrorField, raw: unknown): Sendable {
  // An empty cell (a BI tool's grid writes '') clears a field that holds no free text.
  if (raw === '' && !FREE_TEXT_TYPES.has(field.fieldType)) return { value: null };
  try {
    return { value: sqlToApi(field.fieldType, raw, ctx.dialect.name) };
  } catch (error) {
    return jsonCarries(raw) ? { value: raw } : { refused: `${field.fieldName}: ${(error as Error).message}` };
  }
}

/** The API value of a row's `j`-th writable column. */
function columnValue(ctx: MirrorContext, current: CurrentRows, row: Record<string, unknown>, j: number): Sendable {
  return sendable(ctx, current.writable[j]!, row[current.keys[j]!]);
}

/**
 * A float's NaN and infinities as captured: Postgres' to_jsonb and SQLite's capture write these
 * strings (an older SQLite wrote `Inf`, which is no JSON and arrives as text).
 */
const NON_FINITE_TEXT = new Set(['NaN', 'Infinity', '-Infinity', 'Inf', '-Inf']);

/** The API value of an update entry's captured `new_value`. */
function capturedValue(ctx: MirrorContext, field: MirrorField, stored: unknown): Sendable {
  let raw = storedSqlValue(ctx, stored);
  if (typeof raw === 'string' && NON_FINITE_TEXT.has(raw) && valueKindOf(field.fieldType) === 'number') raw = Number(raw.replace(/Inf$/, 'Infinity'));
  return sendable(ctx, field, raw);
}

/** Whether JSON.stringify gives back this value as it is (no NaN or infinity turned into null, no bigint). */
function jsonCarries(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(jsonCarries);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value as object).every(jsonCarries);
  return false;
}

/** A record's due entries, in capture order, as one create, update or delete (one pass over them). */
function fold(
  ctx: MirrorContext, info: TableInfo, fieldOf: EntryFields, recordId: number, entries: readonly EntryRow[],
  current: CurrentRows | undefined, row: Record<string, unknown> | undefined,
): PendingEdit {
  const entryIds: number[] = [];
  const sentEntryIds: number[] = [];
  let sendingSince: string | null = null;
  let attempts = 0;
  let insert: EntryRow | undefined;
  let deleted = false;
  for (const e of entries) {
    const id = Number(e.entry_id);
    entryIds.push(id);
    const tries = Number(e.attempts);
    if (tries > attempts) attempts = tries;
    if (e.sending_since !== null) {
      sentEntryIds.push(id);
      const since = ctx.driver.fromTimestamp(e.sending_since);
      if (since !== null && (sendingSince === null || since > sendingSince)) sendingSince = since;
    }
    if (e.operation === 'insert') insert ??= e;
    else if (e.operation === 'delete') deleted = true;
  }
  const sentBody = insert !== undefined && insert.sending_since !== null && insert.new_value !== null
    ? (decodeEntryValue(ctx, undefined, insert.new_value) as Record<string, unknown>)
    : null;
  const base = { tableId: info.table.tableId, recordId, attempts, sendingSince, sentEntryIds, sentBody };
  if (deleted) {
    // A delete of a row created here cancels out: a negative id tells the push to send nothing.
    return { ...base, entryIds, operation: 'delete', values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(), unsendable: [] };
  }
  const values = new Map<string, unknown>();
  const oldValues = new Map<string, unknown>();
  const retriedFields = new Set<string>();
  const fieldEntryIds = new Map<string, number[]>();
  /** Entries that cannot be sent, by reason. */
  const refused = new Map<string, number[]>();
  const refuse = (message: string, ids: readonly number[]) => {
    const list = refused.get(message);
    if (list) list.push(...ids);
    else refused.set(message, [...ids]);
  };
  /** Fields whose value cannot be sent, with why. */
  const badValues = new Map<string, string>();
  /** An update's fields and the value each one's last entry captured. */
  const captured = new Map<string, { field: MirrorField; stored: unknown }>();
  for (const e of entries) {
    if (e.operation !== 'update' || e.column_name === null) continue;
    const field = e.field_id === null ? fieldOf.byColumn.get(e.column_name) : fieldOf.byId.get(e.field_id);
    const why = unsendableField(e, field);
    if (why !== undefined) {
      refuse(why, [Number(e.entry_id)]);
      continue;
    }
    const name = field!.fieldName;
    const ids = fieldEntryIds.get(name);
    if (ids) ids.push(Number(e.entry_id));
    else fieldEntryIds.set(name, [Number(e.entry_id)]);
    if (insert === undefined) {
      if (!oldValues.has(name)) oldValues.set(name, decodeEntryValue(ctx, field, e.old_value));
      if (e.retried_at !== null) retriedFields.add(name);
      // An update sends the value its last entry captured, as `wsmirror outbox` lists it, not
      // the row's: a failed edit's row may have been read again from upstream since (its table
      // left the selection and came back, its column was rebuilt), and a retry must send the edit.
      captured.set(name, { field: field!, stored: e.new_value });
    } else if (row === undefined) {
      values.set(name, decodeEntryValue(ctx, field, e.new_value));
    }
  }
  for (const [name, { field, stored }] of captured) {
    const read = capturedValue(ctx, field, stored);
    if ('value' in read) values.set(name, read.value);
    else badValues.set(name, read.refused);
  }
  if (insert !== undefined && row !== undefined && current !== undefined) {
    // A create sends every writable value the row holds, later updates included.
    for (let j = 0; j < current.writable.length; j++) {
      const read = columnValue(ctx, current, row, j);
      if ('refused' in read) badValues.set(current.writable[j]!.fieldName, read.refused);
      else if (read.value !== null) values.set(current.writable[j]!.fieldName, read.value);
    }
  }
  // An update's field whose value cannot be sent: its entries are refused with that reason.
  if (insert === undefined) {
    for (const [name, message] of badValues) {
      refuse(message, fieldEntryIds.get(name) ?? []);
      fieldEntryIds.delete(name);
      oldValues.delete(name);
    }
  }
  const unsendable = [...refused].map(([message, ids]) => ({ entryIds: ids, message }));
  let kept = entryIds;
  if (unsendable.length > 0) {
    const out = new Set(unsendable.flatMap((u) => u.entryIds));
    kept = entryIds.filter((id) => !out.has(id));
  }
  if (insert === undefined) return { ...base, entryIds: kept, operation: 'update', values, oldValues, retriedFields, fieldEntryIds, unsendable };
  // A value of the row that cannot be sent holds the whole create back; an edit of a field no
  // longer there fails alone, and the row is created without it.
  if (badValues.size > 0) {
    return {
      ...base, entryIds: [], operation: 'create', values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(),
      unsendable: [...unsendable, { entryIds: kept, message: [...badValues.values()].join('; ') }],
    };
  }
  return { ...base, entryIds: kept, operation: 'create', values, oldValues: new Map(), retriedFields: new Set(), fieldEntryIds, unsendable };
}
