import { sql } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../../errors.ts';
import { MirrorLockedError } from '../errors.ts';
import { checkCatalogVersion } from '../catalog-tables.ts';
import { catalogTableDdl, catalogTablesOf } from '../catalog-ddl.ts';
import { initCatalogVersion, readCatalogVersion } from '../catalog-version.ts';
import type { Dialect } from '../dialect.ts';
import type { DialectDriver } from '../dialect-driver.ts';
import { ROW_LOCK_TIMEOUT } from './row-locks.ts';
import { isLockTimeout, lockHolders, lockedMessage } from './schema-change-locks.ts';

/**
 * Creates what is missing of the catalog in `schema` (the schema too), on an open for writing.
 * Locks other sessions hold past the bound of row-locks.ts end it with MirrorLockedError naming them.
 */
export async function ensureCatalog(driver: DialectDriver, dialect: Dialect, schema: string): Promise<void> {
  try {
    await setUpCatalog(driver, dialect, schema);
  } catch (error) {
    if (!(error instanceof MirrorLockedError) || !isLockTimeout(error.cause)) throw error;
    // The set-up of an open, not a cycle's write: it says what happens next.
    const holders = await lockHolders(driver.db, schema, undefined, -1, { rowWriters: true });
    throw new MirrorLockedError(lockedMessage(
      `setting up the mirror's catalog (schema ${schema}) needs locks other sessions held for over ${ROW_LOCK_TIMEOUT}; `
        + 'nothing was changed, and wsmirror stops (under systemd it starts again 10 s later)', holders,
    ), { cause: error });
  }
}

async function setUpCatalog(driver: DialectDriver, dialect: Dialect, schema: string): Promise<void> {
  await driver.write(async (tx) => {
    // Serialises concurrent first opens of the same schema.
    await sql`SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext(${`wsmirror:${schema}`}))`.execute(tx.db);
    // CREATE SCHEMA needs CREATE on the database even when the schema exists: only ask for it
    // when the schema is missing, so a role that merely owns its schema can run every command.
    const { rows: schemas } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = ${schema}`
      .execute(tx.db);
    if (Number(schemas[0]?.n ?? 0) === 0) await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(tx.db);
    const defs = catalogTablesOf(dialect);
    // Only what is missing: even CREATE … IF NOT EXISTS of an index takes its table's lock, and
    // an application's open transaction that edited the mirror holds the outbox's (its capture).
    const { rows: present } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${schema}`.execute(tx.db);
    const exists = new Set(present.map((r) => r.name));
    const missing = defs.flatMap((def) => {
      const [table, ...indexes] = catalogTableDdl(dialect, def, (n) => driver.table(n));
      if (!exists.has(def.name)) return [table!, ...indexes];
      return indexes.filter((_, i) => !exists.has(def.indexes![i]!.name));
    });
    // One round trip for every table and index; their texts hold no bind parameters.
    await driver.runScript(tx, missing.map((stmt) => stmt.compile(tx.db).sql));
    // Described when made: on a fresh catalog all of them, else those this version adds.
    const made = defs.filter((def) => !exists.has(def.name));
    if (made.length > 0) {
      await driver.comment(tx, made.flatMap((def) => [
        { sqlTable: def.name, column: null, text: def.comment },
        ...def.columns.map((c) => ({ sqlTable: def.name, column: c.name, text: c.comment })),
      ]));
    }
    await initCatalogVersion(driver.catalog(tx.db));
  });
}

/** On an open of a mirror that must exist: its catalog is there, of a version this one reads (ConfigError otherwise). */
export async function verifyCatalog(driver: DialectDriver, schema: string): Promise<void> {
  const { rows } = await sql<{ exists: boolean }>`SELECT to_regclass(${`${pg.escapeIdentifier(schema)}."_wsmirror_meta"`}) IS NOT NULL AS exists`
    .execute(driver.db);
  if (!rows[0]?.exists) throw new ConfigError('no wsmirror catalog there (no _wsmirror_meta table); run wsmirror sync to create it');
  checkCatalogVersion(await readCatalogVersion(driver.catalog(driver.db)));
}
