import type { ApiRecord } from '../api/records.ts';
import type { Catalog, TableState } from './catalog.ts';
import type { OutboxStatus } from './catalog-tables.ts';
import type { DialectName } from './dialect-name.ts';
import type { FilesystemRoom } from './filesystem-room.ts';
import type { SyncLockHeld } from './sync-lock-held.ts';
import type { MirrorLogger } from './mirror-logger.ts';
import type { MirrorOutbox, WaitingEdit } from './outbox.ts';
import type { SchemaPlan } from './schema-planner.ts';

/** A table a catalog migration left as it was, and why, as the sync reports it (code MIRROR). */
export interface UnmigratedTable {
  tableId: string;
  message: string;
}

/**
 * The local store, as the sync engine sees it. One interface, two dialects (SQLite, Postgres).
 *
 * Typical cycle:
 *   const catalog = await mirror.readCatalog();
 *   const plan = planSchema(catalog, workspace, { include, exclude });   // pure
 *   await mirror.applySchemaPlan(plan, { cursors: { [SCHEMA_CURSOR_KEY]: asOf } });
 *   await mirror.applyRows(tableId, { upserts, deletes, cursors: { [recordCursorKey(tableId)]: asOf } });
 *
 * Tables are addressed by upstream table id, record values by upstream field name: the mirror
 * maps them to SQL names and types through its catalog. Every write is one transaction, marked as
 * the daemon's own (see `Dialect.daemonWriteCondition`), so readers never see half of it.
 */
export interface Mirror extends MirrorOutbox {
  readonly dialect: DialectName;
  /** The mirror URL with any password masked, for messages. */
  readonly displayUrl: string;
  /**
   * Rows per `applyRows` call that suit the dialect when writing many: SQLite writes block the
   * event loop, so small batches keep fetching going; each Postgres batch costs several round
   * trips, so larger ones are cheaper (bench/README.md has the figures).
   */
  readonly preferredBatchRows: number;
  /**
   * Records per push round that suit the dialect, in whole pairs of batches of 1,000 (two requests
   * are out at once): a SQLite read is cheap, so rounds of one pair let reading and settling one
   * round overlap the next round's requests; each Postgres read and settle costs several round
   * trips, so rounds of two pairs are cheaper (bench/README.md, push).
   */
  readonly preferredPushRoundRecords: number;

  /** A snapshot of the catalog: mirrored tables and fields, with their SQL names and states. */
  readCatalog(): Promise<Catalog>;

  /**
   * Tries again the migration of the tables a catalog migration held back (`Catalog.unmigrated`:
   * a view of a user's own in the way); returns those still held, with why.
   */
  finishMigration(): Promise<UnmigratedTable[]>;

  /**
   * Takes back from other roles the rights on the mirror's tables that let them act as the
   * daemon (`Catalog.extraGrants`: Postgres, a write of the outbox, TRIGGER); one warning per
   * role, naming it. A cycle runs it before its push when its catalog read found some.
   */
  revokeExtraGrants(): Promise<string[]>;

  /**
   * Runs a plan from `planSchema`: DDL, catalog rows and the given cursors in ONE transaction.
   * Refuses (MirrorError) a plan made from an older catalog revision.
   */
  applySchemaPlan(plan: SchemaPlan, options?: { cursors?: CursorWrites }): Promise<void>;

  /**
   * Deletes then upserts rows of one table in ONE transaction, together with the given cursors
   * and table state (the data and the cursor that covers it commit together). An upsert replaces
   * the whole row: a field absent from `values` becomes NULL; unknown field names are ignored.
   * Sets `_synced_at` on every upserted row. Also the way to delete by ids (`{ deletes }`).
   */
  applyRows(tableId: string, batch: RowBatch): Promise<RowBatchResult>;

  /**
   * Encodes records of one table for a later `applyRows` (`{ encoded }`), adding them to `into`
   * when given; a repeated id replaces the earlier row. The pull encodes each page as it arrives,
   * so pages do not outlive their encoding. A value its field cannot store fails here
   * (MirrorValueError); rows encoded before a schema change of the table are refused by
   * `applyRows` (MirrorError).
   */
  encodeRows(tableId: string, records: NonNullable<RowBatch['upserts']>, into?: EncodedRows): Promise<EncodedRows>;

  /** Ids of a table in ascending order, read page by page (bounded memory). */
  streamIds(tableId: string, options?: StreamIdsOptions): AsyncIterable<number>;

  /** Number of rows in a table. */
  countRows(tableId: string): Promise<number>;

  /** Rows by id, decoded back to API values (keyed by field name); missing ids are left out. */
  readRows(tableId: string, ids: readonly RecordId[]): Promise<ApiRecord[]>;

  /** A cursor's value, or undefined when it was never set. */
  getCursor(key: string): Promise<string | undefined>;

  /** Every cursor by key, in one read. */
  readCursors(): Promise<ReadonlyMap<string, string>>;

  /** Sets (or with null, deletes) one cursor, in its own transaction. */
  setCursor(key: string, value: string | null): Promise<void>;

  /**
   * Outbox entries counted per table and status, ordered by table id then status. Combinations
   * with no entry are left out; entries of tables no longer mirrored are included.
   */
  outboxSummary(): Promise<OutboxCount[]>;

  /**
   * The records whose pending outbox entries wait for a row inserted here to be created upstream,
   * as the push decides it, each with that row (operations/waiting-edits.ts). Read-only.
   */
  waitingEdits(): Promise<WaitingEdit[]>;

  /** Updates a table's sync state: backfill state, last successful pull, last error. */
  setTableState(tableId: string, patch: TableStatePatch): Promise<void>;

  /**
   * Marks tables to be mirrored again: `needs_backfill`, their cursors and last error forgotten,
   * in one transaction. Rows and local edits stay; the next cycle backfills them. A table whose
   * SQL table is missing (`Catalog.missing`) gets it again, empty, with its capture and view.
   */
  resetTables(tableIds: readonly string[]): Promise<void>;
  /** Pending updates and deletes of upstream's records → failed with `message` (operations/hold-record-edits.ts). Returns the count. */
  holdRecordEdits(message: string): Promise<number>;

  /** What would keep the daemon from writing this mirror (privileges, a read-only file), one line each. */
  accessProblems(): Promise<string[]>;

  /**
   * The room on the filesystem holding the mirror, read now: SQLite's file and -wal; null for a
   * mirror whose storage is a server's (Postgres), or when the filesystem cannot be asked.
   */
  filesystemRoom(): FilesystemRoom | null;

  /**
   * Why this connection's role may not read the outbox (Postgres: no SELECT on `_wsmirror_outbox`,
   * which docs/querying.md keeps from readers), naming the GRANT that would let it; null when it
   * may (always on SQLite). Reads only.
   */
  outboxUnreadable(): Promise<string | null>;

  /**
   * The wsmirror process (a `run` or `sync`) that holds the sync lock of this mirror now, found
   * without taking the lock (`wsmirror status`: whether a cycle may be under way); null when
   * none does, or when that cannot be told.
   */
  syncLockHolder(): Promise<SyncLockHeld | null>;

  /**
   * SQLite: the mirror's file, -wal, -shm or directory that other users may write (and so write
   * its outbox), one line each naming it and the chmod to run; empty when none, and on Postgres
   * (whose rights are taken back by the cycles: `revokeExtraGrants`). Reads only.
   */
  sharedWriteAccess(): string[];

  /** What the next open for writing brings up to this version (an older catalog or capture set-up), one line each. Reads only. */
  pendingUpgrades(): Promise<string[]>;

  /** What the engine recorded: per table (lag, last error) and about its cycles. */
  readSyncState(): Promise<{ tables: TableSyncState[]; cycle: CycleSummary }>;

  /** Stores the outcome of a cycle (last success or failure, next run). */
  recordCycle(cycle: CycleRecord): Promise<void>;

  /**
   * Before each cycle and its push: confirms this process may still sync the mirror. It holds the
   * sync lock (taken again if it was lost with its connection, logged), or SyncLockLostError
   * (naming the mirror) when another process holds it now; and the mirror it opened is still at
   * its place, or MirrorFileGoneError (SQLite: the file moved, deleted or replaced, naming it and
   * where what was committed to it is now) or MirrorSchemaGoneError (Postgres: its schema or
   * catalog dropped, naming the schema; found by the lock's check). A mirror opened without the
   * sync lock has no lock to confirm.
   */
  confirmSyncing(): Promise<void>;

  /** Closes the connection(s); the mirror cannot be used afterwards. */
  close(): Promise<void>;
}

export type RecordId = string | number;

/** Cursor key → new value; null deletes the cursor. */
export type CursorWrites = Readonly<Record<string, string | null>>;

export interface RowBatch {
  /** Rows from `encodeRows`, written before `upserts`. */
  encoded?: EncodedRows;
  /** Records as the list endpoint returns them. A repeated id: the last one wins. */
  upserts?: readonly { id: RecordId; values: Readonly<Record<string, unknown>> }[];
  /** Ids to delete; applied before the upserts. Unknown ids are ignored. */
  deletes?: readonly RecordId[];
  cursors?: CursorWrites;
  /** New table state, e.g. `ready` with the last backfill page. */
  state?: TableState;
  /**
   * A successful pull of the table ends with these rows: its last pull (now) and the upstream
   * state it holds are recorded, and its last error cleared, in the same transaction (one fewer
   * per table and cycle than `setTableState` after it).
   */
  pulled?: { currentAsOf: string };
  /** A pull undone: its table's last pull and upstream state go back to these, in the same transaction. */
  undone?: { lastPullAt: string | null; currentAsOf: string | null };
}

/** Rows of one table encoded by `Mirror.encodeRows`, held in the mirror's own form until written. */
export interface EncodedRows {
  readonly tableId: string;
  /** Rows held (each id once). */
  readonly count: number;
  /** About how many bytes their values take. */
  readonly bytes: number;
}

export interface OutboxCount {
  tableId: string;
  /** The SQL table its entries name (that of a table no longer mirrored, too). */
  sqlTable: string;
  status: OutboxStatus;
  count: number;
}

export interface RowBatchResult {
  upserted: number;
  deleted: number;
}

export interface OpenMirrorOptions {
  /** Postgres schema holding the mirror (default `public`); created when missing (unless `mustExist`). */
  pgSchema?: string;
  logger?: MirrorLogger;
  /**
   * Open an existing mirror only (read-only commands such as `status`): never create the SQLite
   * file, the Postgres schema or the catalog; a missing one throws ConfigError naming it.
   */
  mustExist?: boolean;
  /**
   * With `mustExist`, for a command that writes (`outbox retry`): an existing catalog of an older
   * layout is brought to this one first, as every other opening does; nothing is created.
   */
  migrate?: boolean;
  /**
   * Make this the one process that syncs the mirror, until `close`: the lock is taken before
   * anything is created or migrated, and MirrorUnavailableError (naming the mirror, and its
   * holder when known) is thrown, with nothing created, when another process (a `wsmirror run`
   * or `sync`) holds it: that passes, and `run` tries again at its next cycle. Two would read
   * the same local inserts and create each record upstream twice.
   */
  syncLock?: boolean;
}

// ---- what the mirror records of the sync, and how ids are streamed (operations implement these) ----

export interface StreamIdsOptions {
  /** Only ids above this one. */
  after?: number;
  /** Only ids below this one. */
  before?: number;
  /** Only rows the daemon last wrote before this time (ISO 8601): rows a resumed scan has not seen. */
  syncedBefore?: string;
  pageSize?: number;
}

/** Why a table's last pull failed, and when; null once a pull succeeded again. */
export interface TableError {
  /** Stable error code (`SAFETY_VALVE`, `UPSTREAM_404`, `INVALID_RESPONSE`…). */
  code: string;
  message: string;
  at: string;
}

export interface TableStatePatch {
  state?: TableState;
  /** End of the last successful pull. */
  lastPullAt?: string | null;
  /** Start of the last successful pull: the upstream state the table holds (see sync/table-lag.ts). */
  currentAsOf?: string | null;
  lastError?: TableError | null;
}

/** What the sync engine recorded about one table (the catalog holds the rest). */
export interface TableSyncState {
  tableId: string;
  /** Start of the last successful pull; null before the first one. */
  currentAsOf: string | null;
  lastError: TableError | null;
}

/** What the sync engine recorded about its cycles, in `_wsmirror_meta` (`cycle_*` keys). */
export interface CycleSummary {
  lastStartedAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  /** What failed in the last failed cycle, one problem per line. */
  lastFailure: string | null;
  /** When `wsmirror run` means to start the next cycle; null when no daemon said. */
  nextRunAt: string | null;
}

/** One finished cycle, as `recordCycle` stores it. */
export interface CycleRecord {
  startedAt: string;
  finishedAt: string;
  /** Empty when the cycle succeeded. */
  problems: readonly string[];
  /** Only a daemon knows it; left as it was when undefined. */
  nextRunAt?: string | null;
  /** Cursors stored with the record: a schema poll's that found no change. */
  cursors?: CursorWrites;
}
