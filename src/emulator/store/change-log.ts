import type { Statement } from 'better-sqlite3';
import { formatTimestamp } from '../../api/index.ts';
import type { Clock } from '../clock.ts';
import { BadRequestError } from '../errors.ts';
import type { Db } from './db.ts';
import { StoredPollFloor } from './poll-floor.ts';
import { recordChangesIndexName } from './table-indexes.ts';

export type RecordChangeType = 'create' | 'update' | 'delete';
export type SchemaKind = 'Module' | 'Table' | 'Field';
export type SchemaAction = 'upserted' | 'deleted';

export interface ChangeWindow {
  since: number;
  /** Inclusive upper bound; from the first page of a poll. */
  asOf: number;
  limit: number;
  offset: number;
}

export interface ChangeRow {
  id: string;
  type: string;
  changedAt: number;
}

/**
 * Append-only logs of record and schema changes, and the clock discipline that makes polling
 * exact: a poll covers `since <= changedAt <= asOf`, and once an `asOf` has been handed out,
 * every later change is stamped strictly after it. So the pages of one poll never shift, and
 * the next poll (`since` = that `asOf`) misses nothing, even with a frozen clock. Both bounds
 * outlive a `--data` restart (see poll-floor.ts).
 */
export class ChangeLog {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #floor: StoredPollFloor;
  #lastAsOf: number;
  #lastStamp: number;
  readonly #insertRecordChanges;
  readonly #insertSchemaChange;
  readonly #schemaWindow;
  readonly #lastRecordChange;
  readonly #recordChangesBySeq;
  /** Per-table statements of the record window (their text names the table's partial index). */
  readonly #perTable = new Map<number, { ensureIndex: Statement; bounded: Statement; open: Statement }>();

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    this.#floor = new StoredPollFloor(db);
    ({ asOf: this.#lastAsOf, stamp: this.#lastStamp } = this.#floor.load());
    // One statement per write: the ids come as one JSON array, logged in its order.
    this.#insertRecordChanges = db.prepare(
      `INSERT INTO record_changes (table_id, record_id, change_type, changed_at)
       SELECT ?, value, ?, ? FROM json_each(?) ORDER BY key`,
    );
    this.#insertSchemaChange = db.prepare(
      'INSERT INTO schema_changes (object_id, kind, action, changed_at) VALUES (?, ?, ?, ?)',
    );
    this.#lastRecordChange = db.prepare('SELECT max(changed_at) AS at FROM record_changes WHERE table_id = ?');
    this.#recordChangesBySeq = db.prepare(
      `SELECT record_id AS id, change_type AS type, changed_at AS changedAt FROM record_changes
       WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY changed_at, seq`,
    );
    this.#schemaWindow = db.prepare(
      `SELECT object_id AS id, kind || ':' || action AS type, changed_at AS changedAt FROM schema_changes
       WHERE changed_at >= ? AND changed_at <= ?
       ORDER BY changed_at, seq LIMIT ? OFFSET ?`,
    );
  }

  /** The timestamp for a change made now: never at or before an `asOf` already handed out. */
  stamp(): number {
    const at = Math.max(this.#clock.now(), this.#lastAsOf + 1);
    if (at > this.#lastStamp) this.#lastStamp = at;
    return at;
  }

  /**
   * The `asOf` of a new poll: now, but never before a stamp already handed out (a frozen or
   * rewound clock would otherwise hide those changes from every later poll). Later changes will
   * be stamped after it.
   */
  openPoll(): number {
    const asOf = this.#present();
    this.#handedOut(asOf);
    return asOf;
  }

  /**
   * The end of a poll: a new one (`openPoll`) without `asOf`, else the `asOf` a client passes
   * back on a later page. One after the present (where a new poll would open) was never handed
   * out: changes made until that time would join pages already read, and the next poll (`since`
   * = it) would miss them, so it is refused. An accepted one counts as handed out: later changes
   * are stamped after it, so its pages never shift.
   */
  pollEnd(asOf: number | undefined): number {
    if (asOf === undefined) return this.openPoll();
    const present = this.#present();
    if (asOf > present) {
      throw new BadRequestError(
        `query.asOf: ${formatTimestamp(asOf)} is after the emulator's present time (${formatTimestamp(present)}): ` +
          "a timestamp from the future is not a cursor; pass back the meta.asOf of the poll's first page",
      );
    }
    this.#handedOut(asOf);
    return asOf;
  }

  /** Stored (one row of `meta`) only when it moves the bound: repeated pages of one poll write nothing. */
  #handedOut(asOf: number): void {
    if (asOf <= this.#lastAsOf) return;
    this.#lastAsOf = asOf;
    this.#floor.saveAsOf(asOf);
  }

  /** Now, but never before an `asOf` or a stamp already handed out (the clock may be frozen or set back). */
  #present(): number {
    return Math.max(this.#clock.now(), this.#lastAsOf, this.#lastStamp);
  }

  /** Logs one change of each record, all at `at`, in the order of `recordIds`. */
  recordsChanged(tableKey: number, recordIds: readonly number[], type: RecordChangeType, at: number): void {
    this.#tableStatements(tableKey);
    this.#insertRecordChanges.run(tableKey, type, at, JSON.stringify(recordIds));
  }

  /**
   * A partial index per table on changed_at (rowid = seq, so its order is the poll order). A deep
   * OFFSET walks it without comparing keys when `asOf` is past the table's last change (the usual
   * case), several times faster than the shared window index. The index is (re)made on first use;
   * creating it is a no-op once it exists.
   */
  #tableStatements(tableKey: number) {
    let st = this.#perTable.get(tableKey);
    if (!st) {
      const index = recordChangesIndexName(tableKey);
      const window = (bounded: boolean) =>
        this.#db.prepare(
          `SELECT seq FROM record_changes INDEXED BY "${index}" WHERE table_id = ${tableKey} AND changed_at >= ?
           ${bounded ? 'AND changed_at <= ?' : 'AND ? IS NOT NULL'} ORDER BY changed_at, seq LIMIT ? OFFSET ?`,
        );
      const ensureIndex = this.#db.prepare(
        `CREATE INDEX IF NOT EXISTS "${index}" ON record_changes (changed_at) WHERE table_id = ${tableKey}`,
      );
      ensureIndex.run();
      st = { ensureIndex, bounded: window(true), open: window(false) };
      this.#perTable.set(tableKey, st);
    }
    return st;
  }

  schemaChanged(kind: SchemaKind, objectId: string, action: SchemaAction, at: number): void {
    this.#insertSchemaChange.run(objectId, kind, action, at);
  }

  /** One page of record changes plus whether more follow. */
  recordChanges(tableKey: number, w: ChangeWindow): { rows: ChangeRow[]; hasMore: boolean } {
    const st = this.#tableStatements(tableKey);
    st.ensureIndex.run();
    const last = (this.#lastRecordChange.get(tableKey) as { at: number | null }).at;
    const window = last !== null && last > w.asOf ? st.bounded : st.open;
    const seqs = (window.all(w.since, w.asOf, w.limit + 1, w.offset) as { seq: number }[]).map((r) => r.seq);
    const rows = seqs.length === 0 ? [] : (this.#recordChangesBySeq.all(JSON.stringify(seqs)) as ChangeRow[]);
    return { rows: rows.slice(0, w.limit).map((r) => ({ ...r, id: String(r.id) })), hasMore: rows.length > w.limit };
  }

  schemaChanges(w: ChangeWindow): { rows: ChangeRow[]; hasMore: boolean } {
    const rows = this.#schemaWindow.all(w.since, w.asOf, w.limit + 1, w.offset) as ChangeRow[];
    return { rows: rows.slice(0, w.limit), hasMore: rows.length > w.limit };
  }

  /** Forgets every `asOf` and stamp handed out (the admin reset empties the logs). */
  reset(): void {
    this.#lastAsOf = Number.NEGATIVE_INFINITY;
    this.#lastStamp = Number.NEGATIVE_INFINITY;
    this.#perTable.clear();
  }

  /** Forgets a deleted table's record history (its index is dropped with the table's others). */
  dropTable(tableKey: number): void {
    this.#db.prepare('DELETE FROM record_changes WHERE table_id = ?').run(tableKey);
    this.#perTable.delete(tableKey);
  }
}
