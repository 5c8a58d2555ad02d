import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteIdent } from '../sql-text.ts';

/**
 * Why the connection's role may not read the outbox of the mirror in `schema`, with the GRANT
 * that would let it; null when it may. The read-only role of docs/querying.md is kept from it on
 * purpose (it holds the values of local edits), and `wsmirror status` run as that role reports
 * the rest without the outbox counts.
 */
export async function outboxUnreadable(db: Kysely<CatalogDb>, schema: string): Promise<string | null> {
  const outbox = `${quoteIdent(schema)}.${quoteIdent('_wsmirror_outbox')}`;
  const { rows: [r] } = await sql<{ role: string; select: boolean }>`SELECT current_user AS role,
    has_table_privilege(${outbox}, 'SELECT') AS select`.execute(db);
  if (r!.select) return null;
  return `not readable by the role ${r!.role} (it has no SELECT on ${outbox}); `
    + `GRANT SELECT ON ${outbox} TO ${quoteIdent(r!.role)} shows its counts, and with them the values of local edits`;
}
