import { Kysely, PostgresDialect, sql } from 'kysely';
import type { CompiledQuery, PostgresPool, PostgresPoolClient, RawBuilder } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../../errors.ts';
import { MirrorLockedError } from '../errors.ts';
import { checkCatalogVersion } from '../catalog-tables.ts';
import type { CatalogDb } from '../catalog-tables.ts';
import { catalogTableDdl, catalogTablesOf } from '../catalog-ddl.ts';
import { initCatalogVersion, readCatalogVersion } from '../catalog-version.ts';
import type { Dialect } from '../dialect.ts';
import type { ColumnSpec, CommentOn, DialectDriver, RowSink, RowsToKeep, SchemaChangeLocks, WriteTx } from '../dialect-driver.ts';
import { PG_SCHEMA_RULE, checkPgSchema, type MirrorLocation } from '../mirror-url.ts';
import { accessProblems } from './access-problems.ts';
import { secureCaptureFunctions } from './capture-grants.ts';
import { captureNamesAnotherSchema } from './capture-schema.ts';
import { foreignTriggerGuardSql, foreignTriggersQuery } from './foreign-triggers.ts';
import { revokeExtraGrants } from './table-grants.ts';
import { connectFailure, sessionEndedError } from './connect-failure.ts';
import { CopyTextRows } from './copy-text.ts';
import { copyUpsert } from './copy-upsert.ts';
import { missingCreatePrivilege } from './create-privilege.ts';
import { inlineParameters } from './inline-parameters.ts';
import { refreshOutboxStatistics } from './outbox-statistics.ts';
import { ROW_LOCK_TIMEOUT, ROW_LOCK_TIMEOUT_SQL, rowLockTimeoutError } from './row-locks.ts';
import { isLockTimeout, lockHolders, lockedMessage, lockTimeoutError, schemaChangeLockSql } from './schema-change-locks.ts';
import { withServerDetail } from './server-detail.ts';
import { explainingPool, mirrorPool } from './mirror-pool.ts';
import { quoteIdent } from '../sql-text.ts';
import type { SqlNames } from '../sql-text.ts';
import { WRITER_SETTING } from './writer-marker.ts';

interface PgWriteTx extends WriteTx {
  readonly client: pg.PoolClient;
}

/**
 * BEGIN, and the transaction-local marker the outbox triggers check to skip the daemon's own
 * writes; with it the bound on lock waits (row-locks.ts).
 */
const MARKER_SQL = `SELECT set_config('${WRITER_SETTING}', 'daemon', true), ${ROW_LOCK_TIMEOUT_SQL}`;

/** Opens the implicit transaction of a simple query as one read-only snapshot (see readStatements). */
const ONE_SNAPSHOT_SQL = 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY';

/**
 * Postgres through pg. Reads use Kysely on the pool; a write transaction holds one pooled client,
 * with a Kysely bound to it for catalog queries and the raw client for COPY (the faster bulk path,
 * see bench/mirror-upsert.ts).
 */
export async function openPostgresDriver(
  dialect: Dialect, location: Extract<MirrorLocation, { dialect: 'postgres' }>, options: { pgSchema: string; mustExist?: boolean },
): Promise<DialectDriver> {
  const schema = options.pgSchema;
  if (checkPgSchema(schema) === undefined) {
    throw new ConfigError(`${JSON.stringify(schema)} is not ${PG_SCHEMA_RULE}`);
  }
  const pool = mirrorPool(location.connectionString);
  const driver = new PostgresDriver(dialect, pool, schema);
  try {
    const { rows } = await sql<{ v: number }>`SELECT current_setting('server_version_num')::int AS v`.execute(driver.db);
    // NOT ENFORCED foreign keys arrived in PostgreSQL 18.
    driver.informationalForeignKeys = Number(rows[0]?.v ?? 0) >= 180_000;
  } catch (error) {
    await driver.close();
    throw connectFailure('cannot reach', `the Postgres mirror ${location.display}`, error);
  }
  try {
    if (options.mustExist) await driver.verifyCatalog();
    else await driver.ensureCatalog();
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
  readonly dialect: Dialect;
  readonly preferredBatchRows = 2_000;
  readonly preferredPushRoundRecords = 4_000;
  informationalForeignKeys = false;
  readonly #stagesByClient = new WeakMap<pg.PoolClient, Set<string>>();
  readonly db: Kysely<CatalogDb>;
  readonly #pool: pg.Pool;
  readonly #schema: string;
  /** One Kysely per pooled client, for queries inside that client's transaction. */
  readonly #bound = new WeakMap<pg.PoolClient, Kysely<CatalogDb>>();
  /** Per client in a write: opens its transaction before the first statement (see `write`). */
  readonly #opening = new WeakMap<pg.PoolClient, () => Promise<void>>();
  readonly #triggerGuard: string;

  constructor(dialect: Dialect, pool: pg.Pool, schema: string) {
    this.dialect = dialect;
    this.#pool = pool;
    this.#schema = schema;
    this.#triggerGuard = foreignTriggerGuardSql(schema);
    this.db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool: explainingPool(pool) }) });
  }

  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb> {
    return db.withSchema(this.#schema);
  }

  table(name: string): RawBuilder<unknown> {
    return sql.id(this.#schema, name);
  }

  readonly names: SqlNames = { qualify: (name) => `${quoteIdent(this.#schema)}.${quoteIdent(name)}` };

  async ensureCatalog(): Promise<void> {
    try {
      await this.#setUpCatalog();
    } catch (error) {
      if (!(error instanceof MirrorLockedError) || !isLockTimeout(error.cause)) throw error;
      // The set-up of an open, not a cycle's write: it says what happens next.
      const holders = await lockHolders(this.db, this.#schema, undefined, -1, { rowWriters: true });
      throw new MirrorLockedError(lockedMessage(
        `setting up the mirror's catalog (schema ${this.#schema}) needs locks other sessions held for over ${ROW_LOCK_TIMEOUT}; `
          + 'nothing was changed, and wsmirror stops (under systemd it starts again 10 s later)', holders,
      ), { cause: error });
    }
  }

  async #setUpCatalog(): Promise<void> {
    await this.write(async (tx) => {
      // Serialises concurrent first opens of the same schema.
      await sql`SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext(${`wsmirror:${this.#schema}`}))`.execute(tx.db);
      // CREATE SCHEMA needs CREATE on the database even when the schema exists: only ask for it
      // when the schema is missing, so a role that merely owns its schema can run every command.
      const { rows: schemas } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${this.#schema}`
        .execute(tx.db);
      if (Number(schemas[0]?.n ?? 0) === 0) await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(this.#schema)}`.execute(tx.db);
      const defs = catalogTablesOf(this.dialect);
      // Only what is missing: even CREATE … IF NOT EXISTS of an index takes its table's lock, and
      // an application's open transaction that edited the mirror holds the outbox's (its capture).
      const { rows: present } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${this.#schema}`.execute(tx.db);
      const exists = new Set(present.map((r) => r.name));
      const missing = defs.flatMap((def) => {
        const [table, ...indexes] = catalogTableDdl(this.dialect, def, (n) => this.table(n));
        if (!exists.has(def.name)) return [table!, ...indexes];
        return indexes.filter((_, i) => !exists.has(def.indexes![i]!.name));
      });
      // One round trip for every table and index; their texts hold no bind parameters.
      await this.runScript(tx, missing.map((stmt) => stmt.compile(tx.db).sql));
      // Described when made: on a fresh catalog all of them, else those this version adds.
      const made = defs.filter((def) => !exists.has(def.name));
      if (made.length > 0) {
        await this.comment(tx, made.flatMap((def) => [
          { sqlTable: def.name, column: null, text: def.comment },
          ...def.columns.map((c) => ({ sqlTable: def.name, column: c.name, text: c.comment })),
        ]));
      }
      await initCatalogVersion(this.catalog(tx.db));
    });
  }

  accessProblems(tables: readonly string[], createdWhenMissing: readonly string[]): Promise<string[]> {
    return accessProblems(this.db, this.#schema, tables, createdWhenMissing);
  }

  async secureCapture(): Promise<string[]> {
    return [...await secureCaptureFunctions(this.db, this.#schema), ...await revokeExtraGrants(this.db, this.#schema)];
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

  async verifyCatalog(): Promise<void> {
    const { rows } = await sql<{ exists: boolean }>`SELECT to_regclass(${`${pg.escapeIdentifier(this.#schema)}."_wsmirror_meta"`}) IS NOT NULL AS exists`
      .execute(this.db);
    if (!rows[0]?.exists) throw new ConfigError('no wsmirror catalog there (no _wsmirror_meta table); run wsmirror sync to create it');
    checkCatalogVersion(await readCatalogVersion(this.catalog(this.db)));
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

  #kyselyFor(client: pg.PoolClient): Kysely<CatalogDb> {
    let db = this.#bound.get(client);
    if (!db) {
      // A pool of one that always hands out this client and never releases it; its queries open
      // the client's write transaction first.
      const query = async (text: string, values?: unknown[]) => {
        await this.#opening.get(client)?.();
        return client.query(text, values);
      };
      const lease = { query, release: () => {} } as unknown as PostgresPoolClient;
      const single: PostgresPool = { connect: async () => lease, end: async () => {}, options: {} };
      db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool: single }) });
      this.#bound.set(client, db);
    }
    return db;
  }

  /**
   * The transaction opens (BEGIN and the marker, one round trip) before the first statement that
   * goes through `tx`. Its statements for the commit then go with COMMIT, in one simple query
   * (after an error in it the rest, COMMIT too, is skipped, and the ROLLBACK below ends it). A
   * write made only of those (a table's idle pull, the cycle's record, a push's settling) never
   * opens one: a simple query of several statements is a transaction of its own, one round trip.
   */
  async write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    let opened: Promise<unknown> | undefined;
    this.#opening.set(client, async () => {
      await (opened ??= client.query(`BEGIN; ${MARKER_SQL}`));
    });
    try {
      const last: CompiledQuery[] = [];
      const tx: PgWriteTx = { db: this.#kyselyFor(client), client, atCommit: (queries) => last.push(...queries) };
      const result = await fn(tx);
      const atCommit = last.map((q) => inlineParameters(q.sql, q.parameters));
      // What a foreign trigger did as the daemon's role is undone with the rest (foreign-triggers.ts).
      if (opened !== undefined) await client.query([...atCommit, this.#triggerGuard, 'COMMIT'].join(';\n'));
      else if (atCommit.length > 0) await client.query([MARKER_SQL, ...atCommit, this.#triggerGuard].join(';\n'));
      return result;
    } catch (error) {
      if (opened !== undefined) {
        // A rollback also undoes temp tables this transaction created.
        this.#stagesByClient.delete(client);
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e as Error;
        });
      }
      const failure = sessionEndedError(withServerDetail(error));
      // A client whose session ended goes back to be discarded.
      if (failure !== error) broken ??= failure as Error;
      throw await rowLockTimeoutError(failure, this.db, this.#schema, (client as unknown as { processID: number }).processID);
    } finally {
      this.#opening.delete(client);
      client.release(broken);
    }
  }

  rowSink(): RowSink {
    return new CopyTextRows();
  }

  async upsertRows(
    tx: WriteTx, sqlTable: string, columns: readonly ColumnSpec[], rows: RowSink, keep?: RowsToKeep,
  ): Promise<void> {
    if (!(rows instanceof CopyTextRows)) throw new Error('upsertRows takes the rows of this driver\'s rowSink()');
    const { client, db } = tx as PgWriteTx;
    // COPY goes through the client itself: the transaction must be open first.
    await this.#opening.get(client)?.();
    let stages = this.#stagesByClient.get(client);
    if (!stages) this.#stagesByClient.set(client, (stages = new Set()));
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

  async runScript(tx: WriteTx, statements: readonly string[]): Promise<void> {
    // Without bind parameters pg sends a simple query, which may hold several statements: a
    // first sync of a table runs dozens, and each round trip to a remote server costs.
    if (statements.length > 0) await sql.raw(statements.join(';\n')).execute(tx.db);
  }

  async lockForSchemaChange(tx: WriteTx, locks: SchemaChangeLocks): Promise<void> {
    try {
      await this.runScript(tx, schemaChangeLockSql(this.names, locks));
    } catch (error) {
      // The server's pid of the transaction's session, which pg keeps from the start-up (untyped).
      const ownPid = (tx as PgWriteTx).client as unknown as { processID: number };
      throw await lockTimeoutError(error, this.db, this.#schema, locks, ownPid.processID);
    }
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
  filesystemRoom(): null {
    return null;
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
