import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { CATALOG_PREFIX } from '../naming.ts';
import { quoteIdent } from '../sql-text.ts';

/** The one policy of each: every role that may read a catalog table reads all of it. */
const READ_POLICY = 'wsmirror_read';

/**
 * The catalog tables (`_wsmirror_*`) take rows from the daemon's role only, whatever rights other
 * roles are granted on them: the outbox's entries go upstream with the API key, and the rest of
 * the catalog steers the push (which upstream table an entry goes to, which fields are
 * read-only, which record a row inserted here became). A write right granted while `run` is up is
 * taken back only by the next cycle (table-grants.ts), after a row forged meanwhile would have been
 * used. Row-level security does it, with a policy for reading only: the tables' owner (the
 * daemon's role, and the capture functions, which run as it) is not subject to it; another
 * role's INSERT fails, its UPDATE and DELETE find no row. Superusers and BYPASSRLS roles pass, as
 * they pass every privilege; TRUNCATE is no row's: revoked (table-grants.ts), and refused meanwhile
 * on the outbox by a trigger (outbox-truncate-guard.ts).
 *
 * On an open for writing: enabled where it is not yet (a mirror made by an older version, a
 * catalog table this version adds); one catalog read otherwise.
 */
export async function secureCatalogRows(db: Kysely<CatalogDb>, schema: string): Promise<void> {
  const { rows } = await sql<{ name: string; enabled: boolean; policy: boolean }>`SELECT c.relname::text AS name, c.relrowsecurity AS enabled,
      EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid AND p.polname = ${READ_POLICY}) AS policy
    FROM pg_catalog.pg_class c
    WHERE c.relnamespace = pg_catalog.to_regnamespace(pg_catalog.quote_ident(${schema}))::oid AND c.relkind = 'r'
      AND c.relname >= ${CATALOG_PREFIX} AND c.relname < ${`${CATALOG_PREFIX.slice(0, -1)}~`}
      AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')`.execute(db);
  // Another role's catalog table: the open fails elsewhere, naming it.
  const statements = rows.filter((t) => t.name.startsWith(CATALOG_PREFIX)).flatMap((t) => {
    const table = `${quoteIdent(schema)}.${quoteIdent(t.name)}`;
    return [
      ...(t.policy ? [] : [`CREATE POLICY ${quoteIdent(READ_POLICY)} ON ${table} FOR SELECT USING (true)`]),
      ...(t.enabled ? [] : [`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`]),
    ];
  });
  if (statements.length > 0) await sql.raw(statements.join(';\n')).execute(db);
}
