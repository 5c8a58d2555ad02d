import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { CompiledQuery, RawBuilder } from 'kysely';
import { ConfigError, MirrorFileMissingError } from '../../errors.ts';
import type { CatalogDb, CatalogTableDef } from '../catalog-tables.ts';
import { oneOfCheckSql } from '../catalog-ddl.ts';
import type { Dialect, SyncLockHeld } from '../dialect.ts';
import type { ColumnSpec, DialectDriver, RowSink, RowsToKeep, WriteTx } from '../dialect-driver.ts';
import type { FilesystemRoom } from '../filesystem-room.ts';
import { MirrorError } from '../errors.ts';
import type { MirrorLocation } from '../mirror-url.ts';
import { quoteIdent } from '../sql-text.ts';
import type { SqlNames } from '../sql-text.ts';
import { BoundRows } from './bound-rows.ts';
import { RowWrites } from './row-writes.ts';
import { accessProblems, explainAccessFailure } from './access-problems.ts';
import { sharedWriteAccess } from './shared-write-access.ts';
import { ensureCatalog, verifyCatalog } from './catalog-setup.ts';
import { explainDiskFull, filesystemRoom } from './disk-full.ts';
import { closeKeepingWal } from './wal-kept-on-close.ts';
import { sqliteSyncLockHolder } from './sync-lock.ts';
import { MirrorFileWatch } from './mirror-file-watch.ts';
import { escapeRegExp, rewriteTableDefinition } from './table-definition.ts';
import { StatementCache } from './statement-cache.ts';
import { runBatchingTriggers } from './trigger-batch.ts';
import { unreadableViews, viewsNaming } from './unreadable-views.ts';
import { BUSY_TIMEOUT_MS, WriteTransactions } from './write-transaction.ts';

/** What the -wal file is trimmed back to when SQLite starts the log over (it grows past it between). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * SQLite through better-sqlite3 (WAL). Queries go through Kysely; the row writes run prepared
 * statements (compiled by Kysely) on the same connection, inside Kysely's connection lock, so
 * nothing else interleaves with a write transaction. Both prepare through one statement cache,
 * except the row upserts, which are kept apart by table (upsert-statements.ts).
 */
export async function openSqliteDriver(
  dialect: Dialect, location: Extract<MirrorLocation, { dialect: 'sqlite' }>, options: { mustExist?: boolean; writes?: boolean } = {},
): Promise<DialectDriver> {
  const mustExist = options.mustExist === true && location.path !== ':memory:';
  if (mustExist && !existsSync(location.path)) {
    const file = resolve(location.path);
    throw new MirrorFileMissingError(`the SQLite mirror ${location.display} does not exist (no file ${file}); run wsmirror sync to create it`, file);
  }
  if (options.writes === true && location.path !== ':memory:' && existsSync(location.path)) {
    const problems = accessProblems(location.path, false);
    if (problems.length > 0) {
      throw new ConfigError(`cannot write the SQLite mirror ${location.display}: ${problems.join('; ')}; `
        + 'give the user running wsmirror write access to them (chown, or chmod u+w), or move the mirror (mirror.url) to a directory it owns');
    }
  }
  let raw: Database.Database;
  try {
    // fileMustExist: a file removed since the check above is still not created.
    raw = new Database(location.path, { fileMustExist: mustExist });
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (error) {
    throw new ConfigError(`cannot open the SQLite mirror ${location.display}: ${explainAccessFailure(location.path, error)}`, { cause: error });
  }
  const driver = new SqliteDriver(raw);
  try {
    // An existing mirror is checked before anything is written to the file (not even the WAL switch).
    if (mustExist) await verifyCatalog(driver.db);
    // WAL: readers keep reading the last committed state while the daemon writes.
    const mode = raw.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal' && location.path !== ':memory:') throw new Error(`journal_mode is ${String(mode)}, not wal`);
    raw.pragma('synchronous = NORMAL');
    // A reader that keeps a read transaction open keeps SQLite from starting the log over, so the
    // -wal file grows with every write meanwhile; without a limit it kept that size for good.
    raw.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    // SQLite's own default page cache, 2 MB: better-sqlite3 builds with 16 MB, which a backfill
    // fills with pages it never reads again (it appends at the right edge of its b-trees). That was
    // 15 MiB of the daemon's peak RSS, for no speed that the benches could measure (bench/README.md).
    raw.pragma('cache_size = -2000');
    if (!mustExist) await ensureCatalog(driver, dialect);
  } catch (error) {
    await driver.close();
    if (error instanceof ConfigError) throw new ConfigError(`the SQLite mirror ${location.display}: ${error.message}`, { cause: error });
    const explained = explainDiskFull(location.path, error) ?? explainAccessFailure(location.path, error);
    throw new ConfigError(`cannot use the SQLite mirror ${location.display}: ${explained}`, { cause: error });
  }
  driver.noteWalFile();
  return driver;
}

class SqliteDriver implements DialectDriver {
  readonly preferredBatchRows = 500;
  readonly preferredPushRoundRecords = 2_000;
  // SQLite declares foreign keys only in CREATE TABLE, and enforces them once switched on.
  readonly informationalForeignKeys = false;
  readonly db: Kysely<CatalogDb>;
  readonly #raw: Database.Database;
  readonly #statements: StatementCache;
  readonly #rows: RowWrites;
  readonly #writes: WriteTransactions;
  /** Whether the file and its -wal are still at their paths (undefined in memory). */
  readonly #watch: MirrorFileWatch | undefined;

  constructor(raw: Database.Database) {
    this.#raw = raw;
    this.#watch = MirrorFileWatch.of(raw);
    this.#statements = new StatementCache(raw);
    this.#rows = new RowWrites(raw, this.#statements);
    this.db = new Kysely<CatalogDb>({ dialect: new SqliteDialect({ database: this.#statements.asKyselyDatabase() }) });
    this.#writes = new WriteTransactions(raw, this.db, () => this.#watch?.path ?? raw.name);
  }

  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb> {
    return db;
  }

  table(name: string): RawBuilder<unknown> {
    return sql.id(name);
  }

  readonly names: SqlNames = { qualify: (name) => quoteIdent(name) };

  async secureCapture(): Promise<string[]> {
    return this.sharedWriteAccess();
  }

  sharedWriteAccess(): string[] {
    return this.#raw.memory ? [] : sharedWriteAccess(this.#raw.name);
  }

  async revokeExtraGrants(): Promise<string[]> {
    return [];
  }

  unreadableViews(tx: WriteTx): Promise<Map<string, string>> {
    return unreadableViews(tx.db);
  }

  viewsReadingByName(tx: WriteTx, viewName: string): Promise<string[]> {
    return viewsNaming(tx.db, viewName);
  }

  async viewsDependingOn(): Promise<string[]> {
    // SQLite drops what views read (unreadableViews checks them as the change goes).
    return [];
  }

  async missingCreatePrivilege(): Promise<undefined> {
    return undefined;
  }

  async accessProblems(): Promise<string[]> {
    return this.#raw.memory ? [] : [...accessProblems(this.#raw.name, this.#raw.readonly), ...this.sharedWriteAccess()];
  }

  namespaceNamesQuery(): CompiledQuery {
    return sql<{ name: string }>`SELECT name FROM sqlite_schema`.compile(this.db);
  }

  extraGrantsQuery(): undefined {
    return undefined;
  }

  foreignTriggersQuery(): undefined {
    // Whoever may write the file may do anything the daemon can: a trigger gains no one anything.
    return undefined;
  }

  async readStatements(queries: readonly CompiledQuery[]): Promise<Record<string, unknown>[][]> {
    // Under the connection's lock (no write of this process is half done), in one read
    // transaction run without a pause: one snapshot for all.
    return this.db.connection().execute(async () => this.#raw.transaction(() =>
      queries.map((q) => this.#statements.prepare(q.sql).all(q.parameters as unknown[]) as Record<string, unknown>[]))());
  }

  write<T>(fn: (tx: WriteTx) => Promise<T>, marked = true): Promise<T> {
    return this.#writes.write(fn, marked);
  }

  rowSink(columns: readonly ColumnSpec[]): RowSink {
    return new BoundRows(columns.length);
  }

  async upsertRows(_tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], rows: RowSink, keep?: RowsToKeep): Promise<void> {
    this.#assertInTransaction();
    this.#rows.upsert(sqlTable, columns, rows, keep);
  }

  async deleteRows(_tx: WriteTx, sqlTable: string, ids: readonly number[]): Promise<number> {
    this.#assertInTransaction();
    return this.#rows.delete(sqlTable, ids);
  }

  #assertInTransaction(): void {
    if (!this.#raw.inTransaction) throw new MirrorError('row writes must run inside a write transaction');
  }

  /**
   * SQLite has no ALTER COLUMN. Removing a NOT NULL constraint leaves every stored row valid, so
   * this follows SQLite's own procedure for such changes (lang_altertable.html, "Making Other
   * Kinds Of Table Schema Changes"): the table's stored CREATE statement is rewritten inside the
   * transaction, the schema version bumped, and the result checked before commit. Rebuilding the
   * table instead would break the views and indexes that name it.
   */
  async dropNotNull(_tx: WriteTx, sqlTable: string, column: string): Promise<void> {
    const declared = new RegExp(`(${escapeRegExp(quoteIdent(column))} [A-Za-z]+) NOT NULL`);
    this.#rewriteTableSql(sqlTable, (ddl) => ddl.replace(declared, '$1'));
  }

  async refreshOutboxStatistics(): Promise<void> {
    // SQLite walks the outbox by rowid whatever it knows of it.
  }

  /** The same procedure as dropNotNull: a CHECK that the rows met is replaced by one that says the same. */
  async restateChecks(_tx: WriteTx, table: CatalogTableDef): Promise<void> {
    this.#rewriteTableSql(table.name, (ddl) => {
      for (const c of table.columns) {
        if (!c.oneOf) continue;
        const stored = new RegExp(`CHECK \\(${escapeRegExp(quoteIdent(c.name))} IN \\([^)]*\\)\\)`);
        ddl = ddl.replace(stored, () => oneOfCheckSql(c.name, c.oneOf!));
      }
      return ddl;
    });
  }

  /** Replaces the stored CREATE statement of `sqlTable` by `edit` of it, when that changes it. */
  #rewriteTableSql(sqlTable: string, edit: (ddl: string) => string): void {
    this.#assertInTransaction();
    rewriteTableDefinition(this.#raw, sqlTable, edit);
  }

  async comment(): Promise<void> {
    // SQLite has no comments; labels live in the catalog tables.
  }

  async runScript(tx: WriteTx, statements: Iterable<string>): Promise<void> {
    // In process, statement by statement costs nothing more (a prepared statement holds one),
    // except for a long run of CREATE or DROP TRIGGER: those are made at once (trigger-batch.ts).
    await runBatchingTriggers(this.#raw, statements, async (text) => {
      await sql.raw(text).execute(tx.db);
    }, () => this.#assertInTransaction());
  }

  async lockForSchemaChange(): Promise<undefined> {
    // The write transaction holds the whole file already, and in WAL mode readers never block it.
    return undefined;
  }

  fromBool(value: unknown): boolean {
    return value === 1 || value === 1n || value === true;
  }

  fromJson(value: unknown): unknown {
    return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  }

  fromTimestamp(value: unknown): string | null {
    return typeof value === 'string' ? value : null;
  }

  /** Takes the identity of the -wal file, once SQLite has made it. */
  noteWalFile(): void {
    this.#watch?.noteWalFile();
  }

  filesystemRoom(): FilesystemRoom | null {
    return this.#raw.memory ? null : filesystemRoom(this.#raw.name) ?? null;
  }

  async syncLockHolder(): Promise<SyncLockHeld | null> {
    return this.#raw.memory ? null : sqliteSyncLockHolder(this.#raw.name);
  }

  /** SQLite has no roles: who may read the file reads the outbox. */
  async outboxUnreadable(): Promise<null> {
    return null;
  }

  async mirrorGone(): Promise<string | undefined> {
    return this.#watch?.gone(this.#raw, (fn) => this.db.connection().execute(fn));
  }

  async captureMadeElsewhere(): Promise<boolean> {
    return false;
  }

  async close(): Promise<void> {
    this.#statements.clear();
    this.#rows.clear();
    await closeKeepingWal(this.#raw, this.#watch, () => this.db.destroy());
  }
}
