import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { PostgresPool, PostgresPoolClient, RawBuilder } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { ConfigError } from '../../errors.ts';
import { checkCatalogVersion } from '../catalog-tables.ts';
import type { CatalogDb } from '../catalog-tables.ts';
import { catalogTableDdl, catalogTablesOf } from '../catalog-ddl.ts';
import { initCatalogVersion, readCatalogVersion } from '../catalog-version.ts';
import type { ColumnSpec, CommentOn, Dialect, DialectDriver, RowSink, RowsToKeep, WriteTx } from '../dialect.ts';
import { PG_SCHEMA_RULE, checkPgSchema, type MirrorLocation } from '../mirror-url.ts';
import { hash8 } from '../naming.ts';
import { CopyTextRows, ROW_NUMBER_COLUMN } from './copy-text.ts';
import { quoteIdent } from '../sql-text.ts';
import type { SqlNames } from '../sql-text.ts';
import { WRITER_SETTING } from './writer-marker.ts';

interface PgWriteTx extends WriteTx {
  readonly client: pg.PoolClient;
}

/** Session settings every connection of the mirror gets. */
const SESSION_SQL = [
  // Dates print as YYYY-MM-DD and comments never see backslash escapes.
  `SET DateStyle = 'ISO, YMD'`,
  `SET standard_conforming_strings = on`,
  `SET TimeZone = 'UTC'`,
  // CREATE … IF NOT EXISTS would otherwise log a notice on every run.
  `SET client_min_messages = warning`,
].join('; ');

/** Types as the codec expects them: `date` as text, `bigint` as a number (ids fit in 2^53). */
function typeParsers(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.DATE, (v: string) => v);
  types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  return types;
}

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
  const pool = new pg.Pool({
    connectionString: location.connectionString,
    max: 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    types: typeParsers(),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.query(SESSION_SQL).catch(() => {});
  });
  const driver = new PostgresDriver(dialect, pool, schema);
  try {
    const { rows } = await sql<{ v: number }>`SELECT current_setting('server_version_num')::int AS v`.execute(driver.db);
    // NOT ENFORCED foreign keys arrived in PostgreSQL 18.
    driver.informationalForeignKeys = Number(rows[0]?.v ?? 0) >= 180_000;
  } catch (error) {
    await driver.close();
    throw new ConfigError(`cannot reach the Postgres mirror ${location.display}: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (options.mustExist) await driver.verifyCatalog();
    else await driver.ensureCatalog();
  } catch (error) {
    await driver.close();
    if (error instanceof ConfigError) {
      throw new ConfigError(`the Postgres mirror ${location.display} (schema ${schema}): ${error.message}`, { cause: error });
    }
    throw new ConfigError(
      `cannot set up the Postgres mirror ${location.display} (schema ${schema}): ${(error as Error).message}`, { cause: error },
    );
  }
  return driver;
}

/** Outbox entries from which a push makes sure the planner knows the outbox's size. */
const OUTBOX_ANALYZE_ENTRIES = 20_000;

class PostgresDriver implements DialectDriver {
  readonly dialect: Dialect;
  readonly preferredBatchRows = 2_000;
  readonly preferredPushRoundRecords = 5_000;
  informationalForeignKeys = false;
  readonly #stagesByClient = new WeakMap<pg.PoolClient, Set<string>>();
  readonly db: Kysely<CatalogDb>;
  readonly #pool: pg.Pool;
  readonly #schema: string;
  /** One Kysely per pooled client, for queries inside that client's transaction. */
  readonly #bound = new WeakMap<pg.PoolClient, Kysely<CatalogDb>>();

  constructor(dialect: Dialect, pool: pg.Pool, schema: string) {
    this.dialect = dialect;
    this.#pool = pool;
    this.#schema = schema;
    this.db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool }) });
  }

  catalog(db: Kysely<CatalogDb>): Kysely<CatalogDb> {
    return db.withSchema(this.#schema);
  }

  table(name: string): RawBuilder<unknown> {
    return sql.id(this.#schema, name);
  }

  readonly names: SqlNames = { qualify: (name) => `${quoteIdent(this.#schema)}.${quoteIdent(name)}` };

  async ensureCatalog(): Promise<void> {
    await this.write(async (tx) => {
      // Serialises concurrent first opens of the same schema.
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`wsmirror:${this.#schema}`}))`.execute(tx.db);
      // CREATE SCHEMA needs CREATE on the database even when the schema exists: only ask for it
      // when the schema is missing, so a role that merely owns its schema can run every command.
      const { rows: schemas } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${this.#schema}`
        .execute(tx.db);
      if (Number(schemas[0]?.n ?? 0) === 0) await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(this.#schema)}`.execute(tx.db);
      const { rows } = await sql<{ exists: boolean }>`SELECT to_regclass(${`${pg.escapeIdentifier(this.#schema)}."_wsmirror_meta"`}) IS NOT NULL AS exists`.execute(tx.db);
      const fresh = !rows[0]?.exists;
      const defs = catalogTablesOf(this.dialect);
      // One round trip for every table and index; their texts hold no bind parameters.
      await this.runScript(tx, defs.flatMap((def) => catalogTableDdl(this.dialect, def, (n) => this.table(n)).map((stmt) => stmt.compile(tx.db).sql)));
      if (fresh) {
        await this.comment(tx, defs.flatMap((def) => [
          { sqlTable: def.name, column: null, text: def.comment },
          ...def.columns.map((c) => ({ sqlTable: def.name, column: c.name, text: c.comment })),
        ]));
      }
      await initCatalogVersion(this.catalog(tx.db));
    });
  }

  async accessProblems(tables: readonly string[]): Promise<string[]> {
    const problems: string[] = [];
    const { rows: [role] } = await sql<{ role: string; usage: boolean; create: boolean }>`SELECT current_user AS role,
      has_schema_privilege(current_user, ${this.#schema}, 'USAGE') AS usage,
      has_schema_privilege(current_user, ${this.#schema}, 'CREATE') AS create`.execute(this.db);
    if (!role!.usage) problems.push(`role ${role!.role} has no USAGE on schema ${this.#schema}`);
    if (!role!.create) problems.push(`role ${role!.role} cannot CREATE in schema ${this.#schema} (new upstream tables could not be mirrored)`);
    // Rows are written with INSERT, UPDATE and DELETE; schema changes and capture triggers need the owner.
    const { rows } = await sql<{ name: string; owns: boolean; write: boolean }>`SELECT c.relname AS name,
        pg_has_role(current_user, c.relowner, 'USAGE') AS owns,
        has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT')
          AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE') AS write
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${this.#schema} AND c.relname = ANY(${[...tables]}) ORDER BY c.relname`.execute(this.db);
    for (const r of rows) {
      if (!r.write) problems.push(`role ${role!.role} cannot SELECT, INSERT, UPDATE and DELETE in ${this.#schema}.${r.name}`);
      if (!r.owns) problems.push(`role ${role!.role} does not own ${this.#schema}.${r.name} (schema changes would fail)`);
    }
    const found = new Set(rows.map((r) => r.name));
    for (const name of tables) if (!found.has(name)) problems.push(`table ${this.#schema}.${name} is missing`);
    return problems;
  }

  async verifyCatalog(): Promise<void> {
    const { rows } = await sql<{ exists: boolean }>`SELECT to_regclass(${`${pg.escapeIdentifier(this.#schema)}."_wsmirror_meta"`}) IS NOT NULL AS exists`
      .execute(this.db);
    if (!rows[0]?.exists) throw new ConfigError('no wsmirror catalog there (no _wsmirror_meta table); run wsmirror sync to create it');
    checkCatalogVersion(await readCatalogVersion(this.catalog(this.db)));
  }

  async listNamespaceNames(): Promise<string[]> {
    // Tables, indexes, sequences, views and types share one namespace per schema.
    const { rows } = await sql<{ name: string }>`
      SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${this.#schema}
      UNION SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = ${this.#schema}`.execute(this.db);
    return rows.map((r) => r.name);
  }

  #kyselyFor(client: pg.PoolClient): Kysely<CatalogDb> {
    let db = this.#bound.get(client);
    if (!db) {
      // A pool of one that always hands out this client and never releases it.
      const lease = { query: client.query.bind(client), release: () => {} } as unknown as PostgresPoolClient;
      const single: PostgresPool = { connect: async () => lease, end: async () => {}, options: {} };
      db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool: single }) });
      this.#bound.set(client, db);
    }
    return db;
  }

  async write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      // One round trip: BEGIN, and the transaction-local marker the outbox triggers check to
      // skip the daemon's own writes.
      await client.query(`BEGIN; SELECT set_config('${WRITER_SETTING}', 'daemon', true)`);
      try {
        const tx: PgWriteTx = { db: this.#kyselyFor(client), client };
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A rollback also undoes temp tables this transaction created.
        this.#stagesByClient.delete(client);
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e as Error;
        });
        throw error;
      }
    } finally {
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
    if (rows.ids.length === 0) return;
    const { client, db } = tx as PgWriteTx;
    const names = sql.join(columns.map((c) => sql.id(c.name)));
    // Rows with local edits (rare) are left out of the bulk statement, then those with kept
    // columns written one by one from the stage.
    const held = keep ? rows.ids.filter((id) => keep.wholeRows.has(id) || keep.columns.has(id)) : [];
    if (!rows.repeatedIds && held.length === 0 && await this.#allAboveTable(db, sqlTable, rows.ids)) {
      // Every id is above the table's highest (a backfill, or records created upstream since):
      // none can conflict, so COPY goes straight into the table, about half the server's work of
      // the stage and upsert. Only the daemon writes upstream ids (local inserts get negative
      // ones), so no other writer can add one meanwhile; one that bypassed the triggers would
      // make this write fail, and the next cycle take the upsert.
      const direct = sql`COPY ${this.table(sqlTable)} (${names}) FROM STDIN`.compile(db);
      await pipeline(Readable.from(rows.chunks()), client.query(copyFrom(direct.sql)));
      return;
    }
    // COPY into a session temp table shaped like the target (plus a number for each line), then
    // one INSERT … SELECT … ON CONFLICT. The stage's name follows the column layout, so a schema
    // change gets a new one.
    const stage = `_wsmirror_stage_${hash8(JSON.stringify([this.#schema, sqlTable, columns, ROW_NUMBER_COLUMN, 'identity']))}`;
    const row = sql.id(ROW_NUMBER_COLUMN);
    // Temp tables live as long as the pooled connection: create each stage once per connection.
    let stages = this.#stagesByClient.get(client);
    if (!stages) this.#stagesByClient.set(client, (stages = new Set()));
    if (!stages.has(stage)) {
      await sql`CREATE TEMP TABLE IF NOT EXISTS ${sql.id(stage)} (${row} bigint GENERATED ALWAYS AS IDENTITY, ${sql.join(
        columns.map((c) => sql`${sql.id(c.name)} ${sql.raw(columnType(c.sqlType))}`),
      )}) ON COMMIT DELETE ROWS`.execute(db);
      stages.add(stage);
    }
    const copy = sql`COPY ${sql.id(stage)} (${names}) FROM STDIN`.compile(db);
    await pipeline(Readable.from(rows.chunks()), client.query(copyFrom(copy.sql)));
    const upsert = (kept: ReadonlySet<string> | undefined) => sql.join(columns
      .filter((c) => c.name !== 'id' && !kept?.has(c.name))
      .map((c) => sql`${sql.id(c.name)} = excluded.${sql.id(c.name)}`));
    // The last line of a repeated id wins (one statement cannot upsert a row twice).
    const source = rows.repeatedIds
      ? sql`(SELECT DISTINCT ON (${sql.id('id')}) * FROM ${sql.id(stage)} ORDER BY ${sql.id('id')}, ${row} DESC) AS ${sql.id('last')}`
      : sql.id(stage);
    const except = held.length > 0 ? sql` WHERE ${sql.id('id')} <> ALL(${held}::bigint[])` : sql``;
    await sql`INSERT INTO ${this.table(sqlTable)} (${names}) SELECT ${names} FROM ${source}${except}
      ON CONFLICT (${sql.id('id')}) DO UPDATE SET ${upsert(undefined)}`.execute(db);
    for (const id of held) {
      const kept = keep!.wholeRows.has(id) ? undefined : keep!.columns.get(id);
      if (!kept) continue;
      await sql`INSERT INTO ${this.table(sqlTable)} (${names})
        SELECT ${names} FROM ${sql.id(stage)} WHERE ${sql.id('id')} = ${id} ORDER BY ${row} DESC LIMIT 1
        ON CONFLICT (${sql.id('id')}) DO UPDATE SET ${upsert(kept)}`.execute(db);
    }
  }

  /** True when every id is above the highest id in the table (or the table is empty). */
  async #allAboveTable(db: Kysely<CatalogDb>, sqlTable: string, ids: readonly number[]): Promise<boolean> {
    let lowest = Infinity;
    for (const id of ids) if (id < lowest) lowest = id;
    const { rows } = await sql<{ highest: string | number | null }>`SELECT max(${sql.id('id')}) AS ${sql.id('highest')}
      FROM ${this.table(sqlTable)}`.execute(db);
    const highest = rows[0]?.highest;
    return highest === null || highest === undefined || lowest > Number(highest);
  }

  async deleteRows(tx: WriteTx, sqlTable: string, ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await sql`DELETE FROM ${this.table(sqlTable)} WHERE ${sql.id('id')} = ANY(${ids}::bigint[])`.execute(tx.db);
    return Number(result.numAffectedRows ?? 0n);
  }

  async dropNotNull(tx: WriteTx, sqlTable: string, column: string): Promise<void> {
    await sql`ALTER TABLE ${this.table(sqlTable)} ALTER COLUMN ${sql.id(column)} DROP NOT NULL`.execute(tx.db);
  }

  async refreshOutboxStatistics(): Promise<void> {
    const outbox = this.names.qualify('_wsmirror_outbox');
    try {
      // Counted, not read from pg_stat_user_tables: a session reports its changes there up to
      // seconds after they commit. The count stops at the threshold (an index-only walk).
      const { rows } = await sql<{ entries: string | number; estimated: string | number | null }>`SELECT
        (SELECT count(*) FROM (SELECT 1 FROM ${sql.raw(outbox)} LIMIT ${OUTBOX_ANALYZE_ENTRIES}) AS ${sql.id('o')}) AS ${sql.id('entries')},
        (SELECT reltuples FROM pg_class WHERE oid = ${outbox}::regclass) AS ${sql.id('estimated')}`.execute(this.db);
      const entries = Number(rows[0]?.entries ?? 0);
      // ANALYZE takes about 10 ms per 50,000 entries: worth it only for a large outbox that the
      // planner takes for much smaller than it is (-1: never analyzed).
      if (entries < OUTBOX_ANALYZE_ENTRIES || Number(rows[0]?.estimated ?? -1) >= entries / 2) return;
      await sql`ANALYZE ${sql.raw(outbox)}`.execute(this.db);
    } catch {
      // Statistics only speed reads up; a role that may not analyze reads as before.
    }
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

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** The mirror's own column types are all plain words; anything else is refused. */
function columnType(sqlType: string): string {
  if (!/^[a-z ]+$/.test(sqlType)) throw new Error(`unexpected column type ${JSON.stringify(sqlType)}`);
  return sqlType;
}
