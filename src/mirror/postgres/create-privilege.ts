import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteIdent } from '../sql-text.ts';

/**
 * Why the session's role may not create in `schema`, with the grant that lets it; undefined when
 * it may (see DialectDriver.missingCreatePrivilege). `db` may be a transaction's.
 */
export async function missingCreatePrivilege(db: Kysely<CatalogDb>, schema: string): Promise<string | undefined> {
  const { rows: [r] } = await sql<{ role: string; create: boolean }>`SELECT current_user AS role,
    has_schema_privilege(current_user, ${schema}, 'CREATE') AS create`.execute(db);
  return r!.create ? undefined : noCreateMessage(r!.role, schema);
}

/**
 * A schema change makes objects beside the tables it alters: a new table, and the readable view
 * and capture functions of each table it changes, which need CREATE on the schema where altering
 * a table needs only its ownership.
 */
export function noCreateMessage(role: string, schema: string): string {
  return `role ${role} has no CREATE on schema ${schema}, which a schema change needs (it makes new tables there, and the readable `
    + `views and capture functions of the tables it changes): GRANT CREATE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`;
}
