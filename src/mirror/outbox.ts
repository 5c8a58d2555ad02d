import type { OutboxStatus } from './catalog-tables.ts';

/**
 * The outbox as the push sees it: local edits captured by the mirror's triggers, read coalesced
 * per record (`PendingEdit`), settled with one `EditOutcome` per edit, and listed entry by entry
 * for operators (`OutboxEntry`). docs/mirror.md describes the states.
 */

/** One record's pending local edits, coalesced, values already decoded to API shapes by the mirror's codec. */
export interface PendingEdit {
  tableId: string;
  /** Local id: negative for a row created locally and not yet created upstream. */
  recordId: number;
  /**
   * create (insert, with later updates folded in), update, delete. create+delete of the same new
   * row cancels out (entries settled as done, nothing sent).
   */
  operation: 'create' | 'update' | 'delete';
  /** Outbox entry ids covered by this edit (to settle them together). */
  entryIds: readonly number[];
  /**
   * The record's first entry that was due when read: where the read found it. A read that
   * follows a round (`readPendingEdits`' `after`) starts after the round's last such entry. The
   * edit also holds the record's entries not due yet (backing off): a record's entries go
   * together, in capture order.
   */
  firstDueEntryId: number;
  /** create/update: field name → current local value (API shape). Writable fields only. */
  values: ReadonlyMap<string, unknown>;
  /** update: field name → value before the first pending edit of that field (API shape), for conflict checks. */
  oldValues: ReadonlyMap<string, unknown>;
  /** update: fields with an entry `wsmirror outbox retry` sent again: their local value wins, unchecked. */
  retriedFields: ReadonlySet<string>;
  /**
   * create/update: field name → the outbox entry ids of that field's updates (a create's insert
   * entry is in `entryIds` only), so one field can be settled apart from the rest.
   */
  fieldEntryIds: ReadonlyMap<string, readonly number[]>;
  attempts: number;
  /**
   * Set when a previous send of these entries began and was never settled (crash between send
   * and ack): the push must reconcile before re-sending.
   */
  sendingSince: string | null;
  /** The entries that send covered (edits made since it are not among them). */
  sentEntryIds: readonly number[];
  /** create: the request body of that send, to recognise the record it may have made. */
  sentBody: Readonly<Record<string, unknown>> | null;
  /**
   * Entries of this record that cannot be sent, with why (their table or field is no longer
   * mirrored, or a value JSON cannot carry): not in `entryIds`, nor their values in `values`;
   * the push marks them failed. An edit whose `entryIds` is empty has nothing to send.
   */
  unsendable: readonly { entryIds: readonly number[]; message: string }[];
}

/** A create about to be sent: its entries, and the request body that goes out. */
export interface SentCreate {
  entryIds: readonly number[];
  body: Readonly<Record<string, unknown>>;
}

/** What became of one pushed edit; `settleEdits` records it. */
export type EditOutcome =
  /** Applied upstream; `createdId` is the upstream id of a create. */
  | { kind: 'pushed'; entryIds: readonly number[]; createdId?: number }
  /** Upstream refused it (400): status failed, attempts+1, last_error. */
  | { kind: 'failed'; entryIds: readonly number[]; message: string }
  /** Record deleted upstream, or the manual conflict policy. */
  | { kind: 'conflict'; entryIds: readonly number[]; message: string }
  /** Network error, 429, 5xx: stays pending, attempts+1, tried again at `nextAttemptAt`. */
  | { kind: 'retry'; entryIds: readonly number[]; message: string; nextAttemptAt: string }
  /**
   * A create whose send got no answer (a timeout, a connection lost after sending, a crash), so
   * upstream may still be applying it: stays pending and marked as being sent (`sending_since`
   * kept), `last_error` says so, and it is looked up upstream at `nextAttemptAt`, once the send
   * is old enough (docs/sync.md, "Exactly once"). `attempt`: the send just made counts one.
   */
  | { kind: 'unanswered'; entryIds: readonly number[]; message: string; nextAttemptAt: string; attempt: boolean }
  /**
   * Not sent: it waits for a row inserted here (`blocker`) to be created upstream. Stays pending
   * with `last_error` saying so, and counts no attempt (it was never sent). Due again when that
   * row's create is next tried, if it backs off past `now`, else at `nextAttemptAt`; and at once
   * when the row is created (`settleEdits` clears the wait then).
   */
  | { kind: 'waiting'; entryIds: readonly number[]; message: string; blocker: { tableId: string; recordId: number }; now: string; nextAttemptAt: string }
  /** upstream-wins: the local edit is dropped (the next pull restores upstream's value). */
  | { kind: 'discarded'; entryIds: readonly number[] };

export type OutboxOperation = 'insert' | 'update' | 'delete';

/** One outbox row, for `wsmirror outbox`. Values are decoded to API shapes. */
export interface OutboxEntry {
  entryId: number;
  tableId: string;
  sqlTable: string;
  recordId: number;
  operation: OutboxOperation;
  /** update: the SQL column and its upstream field name; null for insert/delete. */
  columnName: string | null;
  fieldName: string | null;
  oldValue: unknown;
  newValue: unknown;
  changedAt: string;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
}

/**
 * A record whose pending entries wait for a row inserted here to be created upstream: an edit of
 * that row whose insert was refused, or a create or update setting a reference to it. For
 * `wsmirror status`, `wsmirror outbox` and /metrics (`Mirror.waitingEdits`).
 */
export interface WaitingEdit {
  tableId: string;
  recordId: number;
  /** The row inserted here whose create they wait for (the record's own, or the one a reference points at). */
  waitsFor: { tableId: string; recordId: number };
  /** The record's pending entries: all of them wait. */
  entries: number;
}

/** A row inserted here and created upstream: its temporary id, and the upstream id it took. */
export interface CreatedRow {
  tableId: string;
  tempId: number;
  createdId: number;
}

/** Selects outbox entries; an absent list does not filter, several lists all apply. */
export interface OutboxFilter {
  statuses?: readonly OutboxStatus[];
  tableIds?: readonly string[];
  entryIds?: readonly number[];
}

/** Which pending edits `readPendingEdits` reads. */
export interface ReadPendingOptions {
  now: string;
  limit: number;
  after?: number;
  /** Tables whose edits are left where they are (tables a catalog migration held back). */
  exceptTables?: readonly string[];
}

/**
 * The outbox operations of a mirror (`Mirror` extends this). A create and a delete of the same
 * new row read as a `delete` of its negative id: nothing to send, settle it as `pushed`. The push reads, marks and settles
 * edits; `wsmirror outbox` lists, retries and discards them.
 */
export interface MirrorOutbox {
  /**
   * The records with a pending entry due at `now` (next_attempt_at null or <= now), each as one
   * edit of ALL its pending entries, due or not, oldest first, at most `limit` records; with
   * `after`, only records whose oldest due entry comes after that entry id (the records that
   * follow a round already read). Read-only.
   */
  readPendingEdits(options: ReadPendingOptions): Promise<PendingEdit[]>;
  /**
   * Marks creates as being sent (sending_since on their entries, the body in their insert
   * entry's new_value), committed before the request goes out: after a crash, the push finds
   * the record that send made by the body it sent, whatever was edited locally since.
   */
  markSending(creates: readonly SentCreate[], at: string): Promise<void>;
  /**
   * Applies outcomes in ONE daemon transaction: pushed entries are deleted; a create's temporary
   * id becomes `createdId` in its row, in reference columns of other mirrored rows that point at
   * it, and in remaining outbox entries, and the pending entries of those rows are due at once
   * (what waited for the create goes now); failed/conflict/retry/waiting update status,
   * attempts, last_error, next_attempt_at and clear sending_since; unanswered keeps it. A create's temporary and
   * upstream ids are kept (`_wsmirror_created`) after its entries go.
   */
  settleEdits(outcomes: readonly EditOutcome[]): Promise<void>;
  /**
   * Of these rows inserted here (table and temporary id), those created upstream already, with
   * their upstream ids: references to them set after the create (reference columns of mirrored
   * rows, outbox values) take the upstream id now, as the create's settle did to those set
   * before, and the pending entries of the rows holding them are due at once.
   */
  followCreatedRows(rows: readonly { tableId: string; recordId: number }[]): Promise<CreatedRow[]>;
  /**
   * Of these upstream ids of a table, those a row inserted here was created as
   * (`_wsmirror_created`): a create's read-back never binds another row to them.
   */
  boundCreatedIds(tableId: string, createdIds: readonly number[]): Promise<Set<number>>;
  /**
   * For conflict checks: each field's value before the earliest local edit of it still in the
   * outbox, in any status (a failed edit fixed by a later one counts from the first), by record.
   */
  readBaseValues(tableId: string, recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>>;
  /** Entries with table, record, column, old → new, status, attempts, last error, next attempt. */
  listOutbox(filter: OutboxFilter): Promise<OutboxEntry[]>;
  /** failed/conflict → pending (attempts kept, next_attempt_at cleared). Returns the count. */
  retryOutbox(filter: Omit<OutboxFilter, 'statuses'>): Promise<number>;
  /**
   * Deletes entries; returns the affected (tableId, recordId) pairs so the caller can re-read them
   * from upstream. Discarding a local insert also deletes its row and the record's other entries.
   */
  discardOutbox(filter: Omit<OutboxFilter, 'statuses'>): Promise<{ tableId: string; recordId: number }[]>;
  /** The earliest `changed_at` of pending entries (ISO UTC), null when there is none. */
  oldestPendingAt(): Promise<string | null>;
}
