import type { ApiRecord } from '../api/records.ts';
import type { Catalog, OutboxStatus, TableState } from './catalog.ts';
import type { SchemaPlan } from './schema-planner.ts';
import type { DialectName } from './type-map.ts';
import { parseMirrorUrl } from './mirror-url.ts';

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
 * the daemon's own (see `DAEMON_WRITE_CONDITION`), so readers never see half of it.
 */
export interface Mirror {
  readonly dialect: DialectName;
  /** The mirror URL with any password masked, for messages. */
  readonly displayUrl: string;
  /**
   * Rows per `applyRows` call that suit the dialect when writing many: SQLite writes block the
   * event loop, so small batches keep fetching going; each Postgres batch costs several round
   * trips, so larger ones are cheaper (bench/README.md has the figures).
   */
  readonly preferredBatchRows: number;

  /** A snapshot of the catalog: mirrored tables and fields, with their SQL names and states. */
  readCatalog(): Promise<Catalog>;

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

  /** Ids of a table in ascending order, read page by page (bounded memory). */
  streamIds(tableId: string, options?: { after?: number; pageSize?: number }): AsyncIterable<number>;

  /** Number of rows in a table. */
  countRows(tableId: string): Promise<number>;

  /** Rows by id, decoded back to API values (keyed by field name); missing ids are left out. */
  readRows(tableId: string, ids: readonly RecordId[]): Promise<ApiRecord[]>;

  /** A cursor's value, or undefined when it was never set. */
  getCursor(key: string): Promise<string | undefined>;

  /** Sets (or with null, deletes) one cursor, in its own transaction. */
  setCursor(key: string, value: string | null): Promise<void>;

  /**
   * Outbox entries counted per table and status, ordered by table id then status. Combinations
   * with no entry are left out; entries of tables no longer mirrored are included.
   */
  outboxSummary(): Promise<OutboxCount[]>;

  /** Updates a table's sync state and/or the time of its last successful pull. */
  setTableState(tableId: string, patch: { state?: TableState; lastPullAt?: string | null }): Promise<void>;

  /** Closes the connection(s); the mirror cannot be used afterwards. */
  close(): Promise<void>;
}

export type RecordId = string | number;

/** Cursor key → new value; null deletes the cursor. */
export type CursorWrites = Readonly<Record<string, string | null>>;

export interface RowBatch {
  /** Records as the list endpoint returns them. A repeated id: the last one wins. */
  upserts?: readonly { id: RecordId; values: Readonly<Record<string, unknown>> }[];
  /** Ids to delete; applied before the upserts. Unknown ids are ignored. */
  deletes?: readonly RecordId[];
  cursors?: CursorWrites;
  /** New table state, e.g. `ready` with the last backfill page. */
  state?: TableState;
}

export interface OutboxCount {
  tableId: string;
  status: OutboxStatus;
  count: number;
}

export interface RowBatchResult {
  upserted: number;
  deleted: number;
}

/** pino-compatible subset. */
export interface MirrorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
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
}

/**
 * Opens `sqlite:PATH` (also `sqlite://PATH`) or `postgres://…` / `postgresql://…`, creating the
 * catalog tables when missing (unless `mustExist`). A malformed or unreachable URL throws
 * ConfigError naming the URL with its password masked.
 */
export async function openMirror(url: string, options: OpenMirrorOptions = {}): Promise<Mirror> {
  const location = parseMirrorUrl(url);
  const mustExist = options.mustExist === true;
  const { SqlMirror } = await import('./sql-mirror.ts');
  if (location.dialect === 'sqlite') {
    const { openSqliteDriver } = await import('./sqlite/sqlite-driver.ts');
    return SqlMirror.open(await openSqliteDriver(location, { mustExist }), location.display, options.logger);
  }
  const { openPostgresDriver } = await import('./postgres/postgres-driver.ts');
  return SqlMirror.open(await openPostgresDriver(location, options.pgSchema ?? 'public', { mustExist }), location.display, options.logger);
}

/**
 * SQL condition that is true inside the daemon's own write transactions and false for every
 * other client: the outbox triggers use `WHEN NOT (…)` so the daemon's writes are not captured.
 * Postgres: a transaction-local setting; SQLite: a marker row only the daemon's transaction sees.
 */
export const DAEMON_WRITE_CONDITION: Record<DialectName, string> = {
  postgres: `coalesce(current_setting('wsmirror.writer', true), '') = 'daemon'`,
  sqlite: `EXISTS (SELECT 1 FROM "_wsmirror_writer")`,
};
