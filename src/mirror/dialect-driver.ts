import type { Kysely, RawBuilder } from 'kysely';
import type { CatalogDb } from './catalog.ts';
import type { NamingRules } from './naming.ts';
import type { DialectName } from './type-map.ts';
import type { SqlValue } from './value-codec.ts';

/** A write transaction: a Kysely bound to it, plus whatever the driver needs (e.g. the client). */
export interface WriteTx {
  readonly db: Kysely<CatalogDb>;
}

/** A column of a mirrored table as bulk writes see it. */
export interface ColumnSpec {
  name: string;
  sqlType: string;
}

/**
 * What differs between SQLite and Postgres. `SqlMirror` holds everything else; drivers never
 * decide names or types, they only run SQL.
 */
export interface DialectDriver {
  readonly dialect: DialectName;
  readonly naming: NamingRules;
  /** Rows per write transaction that suit this dialect (see Mirror.preferredBatchRows). */
  readonly preferredBatchRows: number;
  /** Kysely on the whole database/pool, for reads. */
  readonly db: Kysely<CatalogDb>;
  /** The catalog tables through `db` (Postgres: in the mirror's schema). */
  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb>;
  /** A (schema-qualified) quoted reference to a table of the mirror. */
  table(name: string): RawBuilder<unknown>;

  /** Creates the catalog tables when missing (first open). */
  ensureCatalog(): Promise<void>;
  /** Checks, without writing, that the catalog exists in a layout this version reads (ConfigError if not). */
  verifyCatalog(): Promise<void>;
  /** Names of every relation and type in the mirror's namespace. */
  listNamespaceNames(): Promise<string[]>;

  /** Runs `fn` in one write transaction marked as the daemon's own. */
  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T>;
  /** Inserts or replaces rows (all columns, `id` first) inside `tx`. */
  upsertRows(tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], rows: readonly SqlValue[][]): Promise<void>;
  /** Deletes rows by id inside `tx`; returns how many existed. */
  deleteRows(tx: WriteTx, sqlTable: string, ids: readonly number[]): Promise<number>;
  /** Sets the comment of a table or column (Postgres); a no-op where comments do not exist. */
  comment(tx: WriteTx, sqlTable: string, column: string | null, text: string | null): Promise<void>;

  /** Catalog value conversions. */
  toBool(value: boolean): unknown;
  fromBool(value: unknown): boolean;
  fromJson(value: unknown): unknown;
  fromTimestamp(value: unknown): string | null;

  close(): Promise<void>;
}
