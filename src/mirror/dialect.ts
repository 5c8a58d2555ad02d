import type { RawBuilder } from 'kysely';
import type { AppointmentBounds } from '../api/appointment.ts';
import type { CatalogColumnKind, CatalogTableDef } from './catalog-tables.ts';
import type { DialectDriver } from './dialect-driver.ts';
import type { MirrorLocation } from './mirror-url.ts';
import type { NamingRules } from './naming.ts';
import type { ReadableView, ViewTypes } from './readable-view.ts';
import type { DialectName } from './dialect-name.ts';
import type { CaptureTable, SqlNames } from './sql-text.ts';
import type { ValueKind } from './value-kind.ts';
import type { MirrorLogger } from './mirror-logger.ts';
import type { SyncLockHeld } from './sync-lock-held.ts';

export type { DialectName } from './dialect-name.ts';

/**
 * Everything the mirror needs to know about one SQL dialect, stated in one place: its folder
 * (`src/mirror/<name>/`) exports one `Dialect`, registered in dialects.ts. Adding a dialect is
 * adding a folder with the same files: `dialect.ts` (this statement), `connection.ts` (its
 * `DialectDriver`, dialect-driver.ts), `capture-triggers.ts` (the SQL that records local edits), `readable-views.ts` (the SQL of the
 * readable views), and a file for its `AppointmentStorage`.
 *
 * The statement is plain data and pure functions, cheap to import (the planner uses it); the
 * driver, which loads the database client, is imported only by `open`.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Identifier limits and reserved names. */
  readonly naming: NamingRules;
  /** SQL type of each value kind: the only types the mirror gives field columns. */
  readonly columnTypes: Readonly<Record<ValueKind, string>>;
  /** How appointments are stored in their `range` columns (value-codec.ts). */
  readonly appointments: AppointmentStorage;
  /**
   * Statements converting a column in place, values kept, when the SQL type the mirror gives a
   * field changes while the field does not (an older mirror opened: operations/migrate-catalog.ts);
   * null where the dialect has no such conversion (the planner then rebuilds the column).
   */
  convertColumnSql(names: SqlNames, column: ColumnConversion): string[] | null;
  /** SQL types of the system columns every mirrored table has. */
  readonly systemColumnTypes: { readonly id: string; readonly syncedAt: string };
  /** SQL type of each catalog column kind. */
  readonly catalogColumnTypes: Readonly<Record<CatalogColumnKind, string>>;
  /** What follows a serial column declared as the single primary key. */
  readonly serialPrimaryKey: string;
  /** The current time in the dialect's timestamp representation, as SQL. */
  readonly nowSql: string;
  /** Catalog tables only this dialect has (e.g. SQLite's writer marker). */
  readonly extraCatalogTables: readonly CatalogTableDef[];
  /**
   * SQL condition that is true inside the daemon's own write transactions and false for every
   * other client: the capture triggers skip the daemon's writes with `NOT (…)`.
   */
  daemonWriteCondition(names: SqlNames): string;
  /**
   * `column` is one of `ids`, the list bound as ONE parameter, so a long list costs one statement
   * instead of one per few hundred ids; written so the planner probes an index on `column` with
   * it (on Postgres `= ANY`: `IN (SELECT unnest(…))` can turn into a join that compares every
   * row with every id when the table has no statistics yet, as a fresh outbox has not).
   */
  idIn(column: RawBuilder<unknown>, ids: readonly number[]): RawBuilder<boolean>;
  /** A boolean as this dialect stores it (SQLite: 1/0). */
  booleanToSql(value: boolean): boolean | number;
  /** A date or timestamp in the API's form as this dialect takes it (Postgres has no year 0000). */
  calendarToSql(text: string): string;
  /** Whether JSON columns come back parsed from the mirror's connection (Postgres jsonb) or as text. */
  readonly jsonArrivesParsed: boolean;
  /** Drops / creates the capture triggers of one mirrored table (docs/mirror.md, "Writing to the mirror"). */
  dropCaptureSql(names: SqlNames, table: CaptureTable): string[];
  createCaptureSql(names: SqlNames, table: CaptureTable): string[];
  /** SQL types of the readable views' own columns. */
  readonly viewTypes: ViewTypes;
  /** Statements run before the views are created (Postgres: drops a function older views used). */
  viewSetupSql(names: SqlNames): string[];
  /**
   * Adds / drops a foreign key that documents a reference without checking it (used only where
   * the driver has `informationalForeignKeys`); null where the dialect cannot declare one.
   */
  foreignKeySql(names: SqlNames, fk: ForeignKey): { create: string; drop: string } | null;
  /** Creates the readable view of one mirrored table (readable-view.ts), with its comments; both drop it alike (view-sql.ts). */
  createViewSql(names: SqlNames, view: ReadableView): string[];
  /**
   * Makes the readable view of one table again where it stands, its calls bound anew, keeping the
   * views of users' own on it (Postgres: CREATE OR REPLACE VIEW); nothing where a view binds
   * nothing when made (SQLite looks its functions up at each query).
   */
  rebindViewSql(names: SqlNames, view: ReadableView): string[];
  /**
   * Makes the readable view `before` (under the name it has) into `after` where it stands, so that
   * views of users' own on it keep working: Postgres renames it and its columns as `after` names
   * them, then CREATE OR REPLACE VIEW with its comments, which keeps its grants; null when Postgres
   * cannot, as `after` does not keep `before`'s columns, in order, at its start (view-growth.ts):
   * the view must then be dropped and created. SQLite, which checks no view when one is dropped,
   * drops and creates it, and views name the columns they read (operations/users-views.ts).
   */
  remakeViewSql(names: SqlNames, before: ReadableView, after: ReadableView): string[] | null;
  /**
   * Whether the database refused a statement because objects of a user's depend on what it drops
   * or alters (Postgres: dependent_objects_still_exist; SQLite: a view or trigger that would no
   * longer read); the error names them.
   */
  refusedForDependants(error: unknown): boolean;
  /** Opens the database at `location`, creating the catalog unless `mustExist`. */
  open(location: MirrorLocation, options: DialectOpenOptions): Promise<DialectDriver>;
  /**
   * Takes the sync lock of the mirror at `location`, whether or not the mirror exists yet, and
   * creates nothing of it: one process syncs a mirror at a time (two would both send the same
   * local inserts). When another process holds it: who (SyncLockHeld). The lock goes with the process
   * however it ends; readers and SQL clients never take it. `logger` is told when the lock is
   * lost under the process and taken again.
   */
  takeSyncLock(location: MirrorLocation, options: { pgSchema: string; logger?: MirrorLogger }): Promise<SyncLock | SyncLockHeld>;
  /**
   * For a mirror not made yet: what would keep this process from creating it at `location`, one
   * line each, naming the missing right (`wsmirror check`). Reads only, creates nothing.
   */
  creationProblems(location: MirrorLocation, options: { pgSchema: string }): Promise<string[]>;
}

/** The stored form of appointments (`[start,end)` upstream) in one dialect. */
export interface AppointmentStorage {
  /** The SQL value of an appointment; `start` and `end` are timestamps in the API's form, start ≤ end. */
  toSql(start: string, end: string): string;
  /**
   * The bounds of a stored appointment; null for a value that holds none (Postgres' empty
   * range); undefined when the value is not an appointment.
   */
  fromSql(value: unknown): AppointmentBounds | null | undefined;
}

/** A column whose SQL type changes from `from` to `to`. */
export interface ColumnConversion {
  sqlTable: string;
  column: string;
  from: string;
  to: string;
}

/** A foreign key from a reference column to the `id` of the referenced table. */
export interface ForeignKey {
  name: string;
  sqlTable: string;
  column: string;
  refSqlTable: string;
}

export type { SyncLockHeld } from './sync-lock-held.ts';

/** A held sync lock (`Dialect.takeSyncLock`). */
export interface SyncLock {
  /**
   * Whether the lock is still this process's: true when it is (taken again first, on Postgres,
   * if its connection was lost); false when another process holds it now. Throws when that
   * cannot be told (the server unreachable), and on Postgres MirrorSchemaGoneError when the
   * mirror's schema or catalog was dropped (checked in the same query).
   */
  confirm(): Promise<boolean> | boolean;
  release(): Promise<void> | void;
}

export interface DialectOpenOptions {
  /** Postgres schema holding the mirror. */
  pgSchema: string;
  mustExist: boolean;
  /**
   * The command writes the mirror. SQLite: a file this user cannot write is refused (ConfigError,
   * naming it) before anything is written; SQLite would open it read-only and fail each write.
   */
  writes: boolean;
}
