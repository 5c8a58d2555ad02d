import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteIdent } from '../sql-text.ts';

const OUTBOX = '_wsmirror_outbox';
/** The one policy: every role that may read the outbox reads all of it. */
const READ_POLICY = 'wsmirror_read';

/**
 * The outbox takes rows from the daemon's role only, whatever rights other roles are granted on
 * it: its entries go upstream with the API key, and a write right granted while `run` is up is
 * taken back only by the next cycle (table-grants.ts), after an entry forged meanwhile would have
 * been pushed. Row-level security does it, with a policy for reading only: the table's owner (the
 * daemon's role, and the capture functions, which run as it) is not subject to it; another role's
 * INSERT fails, its UPDATE and DELETE find no row. Superusers and BYPASSRLS roles pass, as they
 * pass every privilege; TRUNCATE is no row's, and is revoked (table-grants.ts).
 *
 * On an open for writing: enabled where it is not yet (a mirror made by an older version); one
 * catalog read otherwise.
 */
export async function secureOutboxRows(db: Kysely<CatalogDb>, schema: string): Promise<void> {
  const { rows: [outbox] } = await sql<{ enabled: boolean; policy: boolean; owned: boolean }>`SELECT c.relrowsecurity AS enabled,
      EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid AND p.polname = ${READ_POLICY}) AS policy,
      pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE') AS owned
    FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.to_regclass(pg_catalog.format('%I.%I', ${schema}::text, ${OUTBOX}::text))`.execute(db);
  // Another role's outbox: the open fails elsewhere, naming it.
  if (outbox === undefined || !outbox.owned || (outbox.enabled && outbox.policy)) return;
  const table = `${quoteIdent(schema)}.${quoteIdent(OUTBOX)}`;
  await sql.raw([
    ...(outbox.policy ? [] : [`CREATE POLICY ${quoteIdent(READ_POLICY)} ON ${table} FOR SELECT USING (true)`]),
    ...(outbox.enabled ? [] : [`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`]),
  ].join(';\n')).execute(db);
}
