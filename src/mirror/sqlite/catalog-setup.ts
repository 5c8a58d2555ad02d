import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import { ConfigError } from '../../errors.ts';
import { checkCatalogVersion } from '../catalog-tables.ts';
import type { CatalogDb } from '../catalog-tables.ts';
import { catalogTableDdl, catalogTablesOf } from '../catalog-ddl.ts';
import { initCatalogVersion, readCatalogVersion } from '../catalog-version.ts';
import type { Dialect } from '../dialect.ts';
import type { WriteTx } from '../dialect-driver.ts';

/** What the set-up needs of the driver: a write that is not marked as the daemon's (the marker's table may not exist yet). */
interface CatalogSetUpDriver {
  write<T>(fn: (tx: WriteTx) => Promise<T>, marked: boolean): Promise<T>;
  table(name: string): RawBuilder<unknown>;
}

/** Creates what is missing of the catalog, on an open for writing (every statement is CREATE … IF NOT EXISTS). */
export async function ensureCatalog(driver: CatalogSetUpDriver, dialect: Dialect): Promise<void> {
  await driver.write(async (tx) => {
    for (const def of catalogTablesOf(dialect)) {
      for (const stmt of catalogTableDdl(dialect, def, (n) => driver.table(n))) await stmt.execute(tx.db);
    }
    await initCatalogVersion(tx.db);
  }, false);
}

/** On an open of a mirror that must exist: its catalog is there, of a version this one reads (ConfigError otherwise). */
export async function verifyCatalog(db: Kysely<CatalogDb>): Promise<void> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = '_wsmirror_meta'`
    .execute(db);
  if (Number(rows[0]?.n ?? 0) === 0) {
    throw new ConfigError('not a wsmirror mirror (the file has no _wsmirror_meta table)');
  }
  checkCatalogVersion(await readCatalogVersion(db));
}
