import type { CompiledQuery, Kysely, RawBuilder } from 'kysely';
import type { CatalogDb, CatalogTableDef } from './catalog-tables.ts';
import type { FilesystemRoom } from './filesystem-room.ts';
import type { SyncLockHeld } from './sync-lock-held.ts';
import type { SqlNames } from './sql-text.ts';

/** What drivers bind and return: numbers, booleans (Postgres), strings, null. */
export type SqlValue = string | number | boolean | null;

/** The relations of the mirror (names in its namespace) a schema change of one table locks. */
export interface SchemaChangeLocks {
  readonly views: readonly string[];
  readonly tables: readonly string[];
}

/** What a schema change drops whole (views, tables) and the columns it drops, by their SQL names. */
export interface DroppedRelations {
  readonly relations: readonly string[];
  readonly columns: readonly { readonly table: string; readonly column: string }[];
}

/** A write transaction: a Kysely bound to it, plus whatever the driver needs (e.g. the client). */
export interface WriteTx {
  readonly db: Kysely<CatalogDb>;
  /**
   * Statements to run last, just before the commit (a batch's cursors and table state): on
   * Postgres they go with COMMIT, in the same round trip.
   */
  atCommit(queries: readonly CompiledQuery[]): void;
}

/**
 * Rows of one table in the form the driver's bulk write takes (Postgres: COPY text; SQLite: the
 * values to bind), filled one value at a time: the pull encodes each page as it arrives, with no
 * row objects in between (operations/encode-rows.ts). Each row is `beginRow`, one `value` per
 * column (`id` first), `endRow`.
 */
export interface RowSink {
  /** Starts a row; one whose id is already in the sink replaces that row (the last one wins). */
  beginRow(id: number): void;
  value(value: SqlValue): void;
  endRow(): void;
  /** Ids of the rows, each once, in the order first seen. */
  readonly ids: readonly number[];
  /** About how many bytes the values given so far take (a row given again counts twice). */
  readonly bytes: number;
}

/** Rows and columns a bulk write must leave as they are (the local edits of `local-edits.ts`). */
export interface RowsToKeep {
  readonly wholeRows: ReadonlySet<number>;
  /** Record id → column names. */
  readonly columns: ReadonlyMap<number, ReadonlySet<string>>;
}

/** A column of a mirrored table as bulk writes see it. */
export interface ColumnSpec {
  name: string;
  sqlType: string;
}

/** The comment of a table (`column` null) or of one of its columns; null text removes it. */
export interface CommentOn {
  sqlTable: string;
  column: string | null;
  text: string | null;
}

/**
 * An open connection of one dialect (`Dialect.open`, dialect.ts): it runs SQL, and never decides
 * names or types (the operations do, from the `Dialect` and the catalog).
 */
export interface DialectDriver {
  /** Rows per write transaction that suit this dialect (see Mirror.preferredBatchRows). */
  readonly preferredBatchRows: number;
  /** Records per push round that suit this dialect (see Mirror.preferredPushRoundRecords). */
  readonly preferredPushRoundRecords: number;
  /**
   * Whether the database declares foreign keys that it does not enforce (PostgreSQL 18's
   * `NOT ENFORCED`): the mirror then declares one per reference (operations/foreign-keys.ts).
   */
  readonly informationalForeignKeys: boolean;
  /** Kysely on the whole database/pool, for reads. */
  readonly db: Kysely<CatalogDb>;
  /** The catalog tables through `db` (Postgres: in the mirror's schema). */
  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb>;
  /** A (schema-qualified) quoted reference to a table of the mirror. */
  table(name: string): RawBuilder<unknown>;
  /** The same as SQL text, for statements built as text (triggers). */
  readonly names: SqlNames;

  /** The names (`name`) of every relation and type in the mirror's namespace. */
  namespaceNamesQuery(): CompiledQuery;
  /**
   * The triggers on the mirror's tables that wsmirror did not make and that a write of the daemon's
   * would run as its role (`table`, and a `message` naming the trigger and what to do), read with
   * the catalog; undefined where no such trigger can be (SQLite: no roles).
   */
  foreignTriggersQuery(): CompiledQuery | undefined;
  /**
   * Rows (`table`) while other roles hold rights on the mirror's tables that let them act as the
   * daemon (`revokeExtraGrants`), read with the catalog at every cycle; undefined where no role
   * can hold any (SQLite).
   */
  extraGrantsQuery(): CompiledQuery | undefined;
  /**
   * Runs a few compiled reads in one snapshot (a write that commits meanwhile is seen by all of
   * them or by none) and gives each one's rows: on Postgres in one round trip (one simple query,
   * its values written in as literals).
   */
  readStatements(queries: readonly CompiledQuery[]): Promise<Record<string, unknown>[][]>;

  /**
   * Runs `fn` in one write transaction marked as the daemon's own. On Postgres a write whose
   * statements all go to `tx.atCommit` (a table's idle pull, the cycle's record, a push's
   * settling) costs one round trip: they go as one simple query, their values written in as
   * literals.
   */
  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T>;
  /** An empty `RowSink` of this driver, for rows of `columns.length` values. */
  rowSink(columns: readonly ColumnSpec[]): RowSink;
  /**
   * Inserts or replaces the rows of `rows` (a sink of this driver, filled for `columns`) inside
   * `tx`. Rows in `keep.wholeRows` are left out; for rows in `keep.columns` those columns keep
   * the value they have (a new row takes them from `rows`).
   */
  upsertRows(tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], rows: RowSink, keep?: RowsToKeep): Promise<void>;
  /** Deletes rows by id inside `tx`; returns how many existed. */
  deleteRows(tx: WriteTx, sqlTable: string, ids: readonly number[]): Promise<number>;
  /**
   * Lets `column` of a mirrored table hold NULL (an older layout declared it NOT NULL), keeping
   * every row, index, view and trigger as they are.
   */
  dropNotNull(tx: WriteTx, sqlTable: string, column: string): Promise<void>;
  /** Writes the CHECK constraints of a catalog table again as catalog-ddl.ts renders them now, keeping its rows. */
  restateChecks(tx: WriteTx, table: CatalogTableDef): Promise<void>;
  /**
   * Before a push reads the outbox: brings the planner's statistics of the outbox up to date when
   * they are far behind (Postgres), so its reads walk the primary key. A bulk UPDATE captured a
   * moment ago leaves an outbox the planner takes for nearly empty, and a read of each round then
   * scans and sorts every entry after it. A no-op where the planner needs no statistics for that.
   */
  refreshOutboxStatistics(): Promise<void>;
  /**
   * Sets comments of tables and columns (Postgres), all in one round trip; a no-op where comments
   * do not exist.
   */
  comment(tx: WriteTx, comments: readonly CommentOn[]): Promise<void>;
  /**
   * Runs SQL texts a dialect wrote (DDL without bind parameters), in order, inside `tx`: on
   * Postgres as multi-statement queries, one round trip for each few MB of them. Read as it
   * runs: a long script can be made one table at a time, never held whole.
   */
  runScript(tx: WriteTx, statements: Iterable<string>): Promise<void>;
  /**
   * Takes inside `tx`, before a schema change's DDL, the locks it needs: each of `scopes` is one
   * table's relations and those its change rebuilds, taken in order. Postgres waits a bounded time
   * for them (a long query or an open transaction holding one would otherwise stall the change, and
   * every query queued behind it, for as long as it lasts), in attempts that never hold a lock
   * while waiting long for another (postgres/schema-change-locks.ts); returns the scope whose locks
   * did not come, with a MirrorLockedError naming the sessions that hold them, or undefined. A
   * no-op on SQLite, whose readers never block its writer.
   */
  lockForSchemaChange(tx: WriteTx, scopes: readonly SchemaChangeLocks[]): Promise<{ scope: number; error: unknown } | undefined>;

  /**
   * The views of users' own that read what a schema change drops (`own`: the mirror's views, left
   * out), each described as the database would name it in its refusal, found before the change
   * takes any lock (operations/users-views.ts). Postgres locks each such view once it holds what
   * the view reads, and refuses the change; SQLite lets the change through (its views are checked
   * as the change goes, unreadableViews): always none there.
   */
  viewsDependingOn(tx: WriteTx, dropped: DroppedRelations, own: readonly string[]): Promise<string[]>;

  /**
   * The views of users' own in the mirror's namespace that do not read, each with the database's
   * reason, as seen inside `tx` (operations/users-views.ts). SQLite lets the tables and views a view
   * reads be dropped or changed from under it, and then refuses every later ALTER TABLE … RENAME
   * or DROP COLUMN of the file; Postgres refuses such changes itself: always none there, found
   * without a query.
   */
  unreadableViews(tx: WriteTx): Promise<Map<string, string>>;

  /**
   * The views of users' own that read the view `viewName` by its columns' names, as seen inside
   * `tx`: when a change gives one of those names to another field (two fields swapping names),
   * they would show that field's values without failing (operations/users-views.ts). SQLite: every
   * view naming it in its SQL. Postgres: none, its views read a view's columns by position
   * whatever they are called: found without a query.
   */
  viewsReadingByName(tx: WriteTx, viewName: string): Promise<string[]>;

  /**
   * Why the daemon's role may not create tables, views and functions beside the mirror's tables,
   * naming the grant that lets it; undefined when it may. Postgres: CREATE on the schema, which a
   * role that owns its tables but not the schema may lack. SQLite: never (whoever writes the file
   * creates in it). Asked inside `tx`, before a schema change (operations/create-privilege.ts).
   */
  missingCreatePrivilege(tx: WriteTx): Promise<string | undefined>;

  /**
   * On an open for writing: makes the capture functions executable by their owner only again
   * where something else left them otherwise (Postgres: a restore without privileges), and names
   * what it cannot put right (a function another role owns); and takes back from other roles the
   * rights on its tables that let them act as the daemon (Postgres: TRIGGER and the like,
   * postgres/table-grants.ts). One warning each; empty when all is well. SQLite: never anything
   * (its triggers have no privileges).
   */
  secureCapture(): Promise<string[]>;
  /**
   * The part of `secureCapture` that a cycle runs when its catalog read found such rights
   * (`Catalog.extraGrants`): one granted while `run` is up is taken back before the push.
   */
  revokeExtraGrants(): Promise<string[]>;

  /**
   * What would keep the daemon from writing these tables (and creating new ones), one line each;
   * empty when nothing would. A table of `createdWhenMissing` (a catalog table, which an open for
   * writing creates when missing) is no problem when missing. Reads only (`wsmirror check`).
   */
  accessProblems(tables: readonly string[], createdWhenMissing: readonly string[]): Promise<string[]>;

  /** The room on the filesystem holding the mirror (see `Mirror.filesystemRoom`); null on a server's storage. */
  filesystemRoom(): FilesystemRoom | null;
  /** See `Mirror.sharedWriteAccess`. */
  sharedWriteAccess(): string[];

  /** See `Mirror.outboxUnreadable`. */
  outboxUnreadable(): Promise<string | null>;

  /** See `Mirror.syncLockHolder`. */
  syncLockHolder(): Promise<SyncLockHeld | null>;

  /**
   * Why the mirror this driver opened is no longer at its place, or undefined while it is. SQLite:
   * the path no longer names the file it has open (moved, deleted or replaced), or the file's -wal
   * is no longer the one it has open (two stats); once found, what was committed is first written
   * into the file it has open, and the message says where that file is. Postgres: never here (a
   * dropped schema or catalog is found by the sync lock's check, `SyncLock.confirm`, in the query
   * it makes anyway).
   */
  mirrorGone(): Promise<string | undefined>;

  /**
   * Whether the capture set-up in the database was made for the mirror under another name: then
   * it is made again on open, as an older one is. Postgres: a capture function names the
   * mirror's schema under a name it no longer has (renamed, or restored under another name).
   * Never on SQLite, whose triggers name no schema.
   */
  captureMadeElsewhere(): Promise<boolean>;

  /** Catalog value conversions. */
  fromBool(value: unknown): boolean;
  fromJson(value: unknown): unknown;
  fromTimestamp(value: unknown): string | null;

  close(): Promise<void>;
}
