import type { MirrorField } from '../catalog.ts';
import type { MirrorContext, TableInfo } from '../mirror-context.ts';
import type { PendingEdit } from '../outbox.ts';
import { decodeEntryValue } from './outbox-rows.ts';
import { capturedValue, sendable, type Sendable } from './sendable-value.ts';

/**
 * How a record's due outbox entries become one pending edit (readPendingEdits reads them): a
 * create, an update or a delete, with the values to send and the entries that cannot be sent.
 */

/** An outbox entry as the push reads it. */
export interface EntryRow {
  entry_id: unknown;
  table_id: string;
  sql_table: string;
  record_id: unknown;
  operation: string;
  column_name: string | null;
  field_id: string | null;
  old_value: unknown;
  new_value: unknown;
  attempts: number;
  sending_since: unknown;
  retried_at: unknown;
  next_attempt_at: unknown;
}

/** A table's rows as read for a round, decoded to API shapes only where a fold asks. */
export interface CurrentRows {
  writable: readonly MirrorField[];
  /** Column aliases of `writable`, by position. */
  keys: readonly string[];
  /** Position in `writable` by field name. */
  position: ReadonlyMap<string, number>;
  byId: Map<number, Record<string, unknown>>;
}

/** A record's entries of a table no longer mirrored (deleted upstream, or left out by the table patterns). */
export function notMirrored(tableId: string, recordId: number, entries: readonly EntryRow[], firstDueEntryId: number): PendingEdit {
  return {
    tableId, recordId, firstDueEntryId, operation: 'update', entryIds: [], values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(),
    attempts: 0, sendingSince: null, sentEntryIds: [], sentBody: null,
    unsendable: [{
      entryIds: entries.map((e) => Number(e.entry_id)),
      // Named as its entries keep it: the catalog no longer knows the table.
      message: `table ${entries[0]!.sql_table} is no longer mirrored (deleted upstream, or left out by tables.include/exclude); the edit was not sent`
        + (entries.some((e) => e.operation === 'insert' && e.new_value !== null) ? ' (the values of the row inserted here are kept in this entry\'s new_value)' : ''),
    }],
  };
}

/** A table's fields as its update entries name them: by field id, and by column for entries that hold none. */
export interface EntryFields {
  byId: ReadonlyMap<string, MirrorField>;
  byColumn: ReadonlyMap<string, MirrorField>;
}

export function entryFields(fields: readonly MirrorField[]): EntryFields {
  return { byId: new Map(fields.map((f) => [f.fieldId, f])), byColumn: new Map(fields.map((f) => [f.columnName, f])) };
}

/** Why an update entry cannot be sent to its field, or undefined when it can. */
function unsendableField(e: EntryRow, field: MirrorField | undefined): string | undefined {
  const column = JSON.stringify(e.column_name);
  if (field === undefined) return `column ${column}: its field no longer exists upstream (deleted, or deleted and made again); the edit was not sent`;
  if (field.readOnly) return `${field.fieldName}: the field is computed upstream now; the edit was not sent`;
  return undefined;
}

/** The API value of a row's `j`-th writable column. */
function columnValue(ctx: MirrorContext, current: CurrentRows, row: Record<string, unknown>, j: number): Sendable {
  return sendable(ctx, current.writable[j]!, row[current.keys[j]!]);
}

const ROW_GONE_MESSAGE = 'the row inserted here is no longer in the mirror and its values were not kept (its SQL table was dropped, '
  + 'or a REPLACE took its place before wsmirror captured REPLACE as an update): nothing was sent; if the row is lost, insert it again, '
  + 'and discard this entry';

/** A record's due entries, in capture order, as one create, update or delete (one pass over them). */
export function foldEntries(
  ctx: MirrorContext, info: TableInfo, fieldOf: EntryFields, recordId: number, entries: readonly EntryRow[],
  current: CurrentRows | undefined, row: Record<string, unknown> | undefined, firstDueEntryId: number,
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
  const base = { tableId: info.table.tableId, recordId, firstDueEntryId, attempts, sendingSince, sentEntryIds, sentBody };
  if (deleted) {
    // A delete of a row created here cancels out: a negative id tells the push to send nothing.
    return { ...base, entryIds, operation: 'delete', values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(), unsendable: [] };
  }
  // A row inserted here that is gone with no values kept (a table leaving the mirror keeps them,
  // keep-inserted-values.ts) went without a captured delete: its SQL table dropped by hand, or a
  // REPLACE under older capture triggers. Nothing is sent (an empty record is no one's insert),
  // and its entries fail, saying so: the values may be lost, and only the user can tell.
  if (insert !== undefined && row === undefined && insert.new_value === null) {
    return {
      ...base, entryIds: [], operation: 'create', values: new Map(), oldValues: new Map(), retriedFields: new Set(), fieldEntryIds: new Map(),
      unsendable: [{ entryIds, message: ROW_GONE_MESSAGE }],
    };
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
  } else if (insert !== undefined) {
    // The row is gone (its table left the mirror and came back): the create sends the values
    // kept in its entry (keep-inserted-values.ts, or the body an earlier send carried), later
    // updates over them.
    const kept = decodeEntryValue(ctx, undefined, insert.new_value);
    if (kept === null || typeof kept !== 'object' || Array.isArray(kept)) {
      badValues.set('', `the values kept of the row inserted here are no record (${JSON.stringify(kept)}): nothing was sent; insert the row again, and discard this entry`);
    } else {
      const current = new Map(info.fields.map((f) => [f.fieldName, f]));
      const gone = Object.keys(kept).filter((name) => current.get(name)?.readOnly !== false);
      if (gone.length > 0) badValues.set('', `the values kept of the row inserted here name fields the table no longer has as writable (${gone.join(', ')}): nothing was sent; insert the row again from them (they are in this entry's new_value), and discard this entry`);
      for (const [name, value] of Object.entries(kept)) if (!values.has(name)) values.set(name, value);
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
