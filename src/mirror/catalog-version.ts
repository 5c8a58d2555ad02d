import type { Kysely } from 'kysely';
import { CATALOG_VERSION, checkCatalogVersion } from './catalog-tables.ts';
import type { CatalogDb } from './catalog-tables.ts';

/**
 * The catalog's layout version and revision rows: written on a fresh catalog, checked on an
 * existing one (a newer layout is refused). `cat` addresses the catalog tables.
 */
export async function initCatalogVersion(cat: Kysely<CatalogDb>): Promise<void> {
  const version = await readCatalogVersion(cat);
  if (version !== undefined) {
    checkCatalogVersion(version);
    return;
  }
  await cat.insertInto('_wsmirror_meta').values([
    { key: 'catalog_version', value: String(CATALOG_VERSION) },
    { key: 'revision', value: '0' },
  ]).execute();
}

export async function readCatalogVersion(cat: Kysely<CatalogDb>): Promise<string | undefined> {
  const row = await cat.selectFrom('_wsmirror_meta').select('value').where('key', '=', 'catalog_version').executeTakeFirst();
  return row?.value;
}
