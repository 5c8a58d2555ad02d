import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { CATALOG_PREFIX } from '../naming.ts';
import { escapeRegExp } from './table-definition.ts';

/**
 * The views of the file that do not read, but the readable views and the catalog's, each with
 * SQLite's reason ("no such column: title"): see DialectDriver.unreadableViews. Each is compiled
 * by a query that reads no row.
 */
export async function unreadableViews(db: Kysely<CatalogDb>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const { name } of await usersViews(db)) {
    try {
      await sql`SELECT 1 FROM ${sql.id(name)} LIMIT 0`.execute(db);
    } catch (error) {
      out.set(name, error instanceof Error ? error.message : String(error));
    }
  }
  return out;
}

/**
 * The views of users' own whose SQL names the view `viewName` (as a word, in any case or quoting):
 * SQLite finds a view's columns by name each time it runs, so they read whatever column holds that
 * name now. A mention in a comment or a string counts too: a refusal too many, never one too few.
 */
export async function viewsNaming(db: Kysely<CatalogDb>, viewName: string): Promise<string[]> {
  const rows = await usersViews(db);
  const word = new RegExp(`(^|[^A-Za-z0-9_$])${escapeRegExp(viewName)}($|[^A-Za-z0-9_$])`, 'i');
  return rows.filter((r) => word.test(r.sql)).map((r) => r.name);
}

/** The views of the file but the readable views and the catalog's: users' own, with their SQL. */
async function usersViews(db: Kysely<CatalogDb>): Promise<{ name: string; sql: string }[]> {
  const { rows } = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_schema WHERE type = 'view'
    AND name NOT IN (SELECT view_name FROM _wsmirror_tables WHERE view_name IS NOT NULL)
    AND substr(name, 1, ${CATALOG_PREFIX.length}) <> ${CATALOG_PREFIX}`.execute(db);
  return rows;
}
