import { Kysely, PostgresDialect, sql } from 'kysely';
import type { CompiledQuery, RawBuilder } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../../errors.ts';
import { MirrorLockedError } from '../errors.ts';
import type { CatalogDb } from '../catalog-tables.ts';
import type { Dialect, SyncLockHeld } from '../dialect.ts';
import type { ColumnSpec, CommentOn, DialectDriver, DroppedRelations, RowSink, RowsToKeep, SchemaChangeLocks, WriteTx } from '../dialect-driver.ts';
import { PG_SCHEMA_RULE, checkPgSchema, type MirrorLocation } from '../mirror-url.ts';
import { accessProblems } from './access-problems.ts';
import { outboxUnreadable } from './outbox-read-privilege.ts';
import { postgresSyncLockHolder } from './sync-lock.ts';
import { secureCaptureFunctions } from './capture-grants.ts';
import { captureNamesAnotherSchema } from './capture-schema.ts';
import { ensureCatalog, verifyCatalog } from './catalog-setup.ts';
import { foreignTriggersQuery } from './foreign-triggers.ts';
import { extraGrantsQuery, revokeExtraGrants } from './table-grants.ts';
import { secureCatalogRows } from './catalog-row-security.ts';
import { guardOutboxTruncate } from './outbox-truncate-guard.ts';
import { connectFailure, sessionEndedError } from './connect-failure.ts';
import { CopyTextRows } from './copy-text.ts';
import { copyUpsert } from './copy-upsert.ts';
import { viewsDependingOn } from './dependent-views.ts';
import { missingCreatePrivilege } from './create-privilege.ts';
import { inlineParameters } from './inline-parameters.ts';
import { refreshOutboxStatistics } from './outbox-statistics.ts';
import { takeSchemaChangeLocks } from './schema-change-locks.ts';
import { withServerDetail } from './server-detail.ts';
import { explainingPool, mirrorPool } from './mirror-pool.ts';
import { quoteIdent } from '../sql-text.ts';
import type { SqlNames } from '../sql-text.ts';
import { sessionPid, WriteTransactions } from './write-transaction.ts';

/** Opens the implicit transaction of a simple query as one read-only snapshot (see readStatements). */
/**
 * Characters of SQL text one query of a script holds at most: the capture of a table of 40 fields
 * is about 60 KB of text, and that of a first sync of 1,500 such tables, sent as one query, took
 * the daemon past its heap bound (bin/wsmirror's 160 MB) before anything was written.
 */
const SCRIPT_CHARS = 4 * 1024 * 1024;

const ONE_SNAPSHOT_SQL = 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY';

/**
 * Postgres through pg. Reads use Kysely on the pool; a write transaction holds one pooled client
 * (write-transaction.ts).
 */
export async function openPostgresDriver(
  dialect: Dialect, location: Extract<MirrorLocation, { dialect: 'postgres' }>, options: { pgSchema: string; mustExist?: boolean },
): Promise<DialectDriver> {
  const schema = options.pgSchema;
  if (checkPgSchema(schema) === undefined) {
    throw new ConfigError(`${JSON.stringify(schema)} is not ${PG_SCHEMA_RULE}`);
  }
  const pool = mirrorPool(location.connectionString);
  const driver = new PostgresDriver(pool, schema);
  try {
    const { rows } = await sql<{ v: number }>`SELECT current_setting('server_version_num')::int AS v`.execute(driver.db);
    // NOT ENFORCED foreign keys arrived in PostgreSQL 18.
    driver.informationalForeignKeys = Number(rows[0]?.v ?? 0) >= 180_000;
  } catch (error) {
    await driver.close();
    throw connectFailure('cannot reach', `the Postgres mirror ${location.display}`, error);
  }
  try {
    if (options.mustExist) await verifyCatalog(driver, schema);
    else await ensureCatalog(driver, dialect, schema);
  } catch (error) {
    await driver.close();
    // Another session in the way is no configuration error: exit 1, and systemd tries again.
    if (error instanceof MirrorLockedError) throw error;
    if (error instanceof ConfigError) {
      throw new ConfigError(`the Postgres mirror ${location.display} (schema ${schema}): ${error.message}`, { cause: error });
    }
    throw connectFailure(options.mustExist ? 'cannot open' : 'cannot set up', `the Postgres mirror ${location.display} (schema ${schema})`, error);
  }
  return driver;
}

class PostgresDriver implements DialectDriver {
  readonly preferredBatchRows = 2_000;
  readonly preferredPushRoundRecords = 4_000;
  informationalForeignKeys = false;
  readonly db: Kysely<CatalogDb>;
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #writes: WriteTransactions;

  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool;
    this.#schema = schema;
    this.db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool: explainingPool(pool) }) });
    this.#writes = new WriteTransactions(pool, this.db, schema);
  }

  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb> {
    return db.withSchema(this.#schema);
  }

  table(name: string): RawBuilder<unknown> {
    return sql.id(this.#schema, name);
  }

  readonly names: SqlNames = { qualify: (name) => `${quoteIdent(this.#schema)}.${quoteIdent(name)}` };

  accessProblems(tables: readonly string[], createdWhenMissing: readonly string[]): Promise<string[]> {
    return accessProblems(this.db, this.#schema, tables, createdWhenMissing);
  }

  async secureCapture(): Promise<string[]> {
    await secureCatalogRows(this.db, this.#schema);
    await guardOutboxTruncate(this.db, this.#schema);
    return [...await secureCaptureFunctions(this.db, this.#schema), ...await revokeExtraGrants(this.db, this.#schema)];
  }

  async revokeExtraGrants(): Promise<string[]> {
    return revokeExtraGrants(this.db, this.#schema);
  }

  async unreadableViews(): Promise<Map<string, string>> {
    // Postgres refuses to drop or change what a view reads (it names the view): none is left so.
    return new Map();
  }

  async viewsReadingByName(): Promise<string[]> {
    // A view binds the columns it reads by position: a name given to another column moves nothing.
    return [];
  }

  missingCreatePrivilege(tx: WriteTx): Promise<string | undefined> {
    return missingCreatePrivilege(tx.db, this.#schema);
  }

  namespaceNamesQuery(): CompiledQuery {
    // Tables, indexes, sequences, views and types share one namespace per schema.
    return sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${this.#schema}
      UNION SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = ${this.#schema}`.compile(this.db);
  }

  foreignTriggersQuery(): CompiledQuery {
    return foreignTriggersQuery(this.db, this.#schema);
  }

  extraGrantsQuery(): CompiledQuery {
    return extraGrantsQuery(this.db, this.#schema);
  }

  async readStatements(queries: readonly CompiledQuery[]): Promise<Record<string, unknown>[][]> {
    if (queries.length === 0) return [];
    // A simple query of several statements runs as one transaction, but at READ COMMITTED each
    // statement would see what committed before it began: REPEATABLE READ gives them one
    // snapshot, taken by the first (and an error leaves no transaction open behind it).
    const results = await this.#pool.query([ONE_SNAPSHOT_SQL, ...queries.map((q) => inlineParameters(q.sql, q.parameters))].join(';\n'))
      .catch((error: unknown) => {
        throw sessionEndedError(withServerDetail(error));
      });
    return (results as unknown as pg.QueryResult[]).slice(1).map((r) => r.rows as Record<string, unknown>[]);
  }

  write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.#writes.write(fn);
  }

  rowSink(): RowSink {
    return new CopyTextRows();
  }

  async upsertRows(
    tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], rows: RowSink, keep?: RowsToKeep,
  ): Promise<void> {
    if (!(rows instanceof CopyTextRows)) throw new Error('upsertRows takes the rows of this driver\'s rowSink()');
    const { client, db, stages } = await this.#writes.forCopy(tx);
    await copyUpsert({ client, db, table: this.table(sqlTable), schema: this.#schema, sqlTable, stages }, columns, rows, keep);
  }

  async deleteRows(tx: WriteTx, sqlTable: string, ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await sql`DELETE FROM ${this.table(sqlTable)} WHERE ${sql.id('id')} = ANY(${ids}::bigint[])`.execute(tx.db);
    return Number(result.numAffectedRows ?? 0n);
  }

  async dropNotNull(tx: WriteTx, sqlTable: string, column: string): Promise<void> {
    await sql`ALTER TABLE ${this.table(sqlTable)} ALTER COLUMN ${sql.id(column)} DROP NOT NULL`.execute(tx.db);
  }

  refreshOutboxStatistics(): Promise<void> {
    return refreshOutboxStatistics(this.db, this.names.qualify('_wsmirror_outbox'));
  }

  async restateChecks(): Promise<void> {
    // Postgres evaluates an IN list as one array comparison: the stored form costs nothing more.
  }

  async comment(tx: WriteTx, comments: readonly CommentOn[]): Promise<void> {
    // COMMENT takes no bind parameters: the text goes in as a literal escaped by pg.
    await this.runScript(tx, comments.map(({ sqlTable, column, text }) => {
      const value = text === null ? 'NULL' : pg.escapeLiteral(text);
      const target = column === null ? `TABLE ${this.names.qualify(sqlTable)}` : `COLUMN ${this.names.qualify(sqlTable)}.${quoteIdent(column)}`;
      return `COMMENT ON ${target} IS ${value}`;
    }));
  }

  async runScript(tx: WriteTx, statements: Iterable<string>): Promise<void> {
    // Without bind parameters pg sends a simple query, which may hold several statements: a
    // first sync of a table runs dozens, and each round trip to a remote server costs. A long
    // script (the capture of a first sync of many tables) goes in queries of SCRIPT_CHARS.
    let query: string[] = [];
    let chars = 0;
    for (const text of statements) {
      query.push(text);
      chars += text.length;
      if (chars >= SCRIPT_CHARS) {
        await sql.raw(query.join(';\n')).execute(tx.db);
        query = [];
        chars = 0;
      }
    }
    if (query.length > 0) await sql.raw(query.join(';\n')).execute(tx.db);
  }

  lockForSchemaChange(tx: WriteTx, scopes: readonly SchemaChangeLocks[]): Promise<{ scope: number; error: unknown } | undefined> {
    return takeSchemaChangeLocks(tx.db, this.db, this.names, this.#schema, scopes, sessionPid(tx));
  }

  viewsDependingOn(tx: WriteTx, dropped: DroppedRelations, own: readonly string[]): Promise<string[]> {
    return viewsDependingOn(tx.db, this.names, dropped, own);
  }

  fromBool(value: unknown): boolean {
    return value === true;
  }

  fromJson(value: unknown): unknown {
    return value;
  }

  fromTimestamp(value: unknown): string | null {
    if (value instanceof Date) return value.toISOString();
    return typeof value === 'string' ? value : null;
  }

  /** The server's storage: not this process's to watch. */
  sharedWriteAccess(): string[] {
    return [];
  }

  filesystemRoom(): null {
    return null;
  }

  outboxUnreadable(): Promise<string | null> {
    return outboxUnreadable(this.db, this.#schema);
  }

  syncLockHolder(): Promise<SyncLockHeld | null> {
    return postgresSyncLockHolder(this.#pool, this.#schema);
  }

  async mirrorGone(): Promise<undefined> {
    return undefined;
  }

  captureMadeElsewhere(): Promise<boolean> {
    return captureNamesAnotherSchema(this.db, this.#schema);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
