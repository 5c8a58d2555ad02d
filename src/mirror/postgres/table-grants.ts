import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { CATALOG_PREFIX } from '../naming.ts';
import { quoteIdent, quoteLiteral } from '../sql-text.ts';
import { mirrorRelationsSql } from './mirror-relations.ts';

/**
 * Rights on the daemon's tables that no other role needs and that let it act as the daemon: TRIGGER
 * (a trigger runs as the role whose write fires it, foreign-triggers.ts), REFERENCES and TRUNCATE
 * on every table; and on the catalog tables every write (an outbox entry goes upstream with the API
 * key). MAINTAIN (PostgreSQL 17+) runs no code of the role's, but allows LOCK TABLE in every mode,
 * VACUUM FULL, CLUSTER and REINDEX: a role that may only read a table, or the outbox, could hold
 * the lock that stalls the daemon and every application's capture. A writer needs SELECT, INSERT,
 * UPDATE and DELETE on the mirrored tables, and nothing else (config/README.md); `GRANT ALL`
 * gives the rest. A server before 17 has no MAINTAIN: its ACLs never hold it, so nothing is
 * revoked there, and no statement names it.
 */
const NEVER_ON_TABLES = ['TRIGGER', 'REFERENCES', 'TRUNCATE', 'MAINTAIN'];
const NEVER_ON_CATALOG = [...NEVER_ON_TABLES, 'INSERT', 'UPDATE', 'DELETE'];

interface ExtraGrant {
  table: string;
  /** `null` for PUBLIC. */
  grantee: string | null;
  /** Null when the table's owner granted them; else the role that did, holding them WITH GRANT OPTION. */
  grantor: string | null;
  privileges: string[];
}

/**
 * The rights other roles hold on the tables of the mirror in `schema` that the daemon's role owns,
 * by table, grantee and grantor (SQL text): on the table (`relacl`) or on any of its columns
 * (`attacl`: `GRANT UPDATE (sql_name)`, `REFERENCES (id)`), a column's counted as the table's,
 * since a REVOKE on the table takes the same right on every column too. Reached through the
 * indexes of pg_class and pg_attribute (by the mirror's own relations): the catalog read of every
 * cycle runs it (`extraGrantsQuery`).
 */
function extraGrantsSql(schema: string): string {
  const list = (privileges: readonly string[]) => `ARRAY[${privileges.map(quoteLiteral).join(', ')}]`;
  return `SELECT c.relname::text AS "table",
      CASE WHEN a.grantee = 0 THEN NULL ELSE pg_catalog.pg_get_userbyid(a.grantee)::text END AS grantee,
      CASE WHEN a.grantor = c.relowner THEN NULL ELSE pg_catalog.pg_get_userbyid(a.grantor)::text END AS grantor,
      pg_catalog.array_agg(DISTINCT a.privilege_type::text ORDER BY a.privilege_type::text) AS privileges
    FROM ${mirrorRelationsSql(schema)} JOIN pg_catalog.pg_class c ON c.oid = w.relation
    CROSS JOIN LATERAL (SELECT * FROM pg_catalog.aclexplode(c.relacl)
      UNION ALL SELECT e.* FROM pg_catalog.pg_attribute col CROSS JOIN LATERAL pg_catalog.aclexplode(col.attacl) e
        WHERE col.attrelid = c.oid AND col.attnum > 0 AND col.attacl IS NOT NULL) a
    WHERE c.relkind IN ('r', 'p') AND pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')
      AND a.grantee <> c.relowner
      AND (pg_catalog.starts_with(c.relname, ${quoteLiteral(CATALOG_PREFIX)}) AND a.privilege_type = ANY(${list(NEVER_ON_CATALOG)})
        OR a.privilege_type = ANY(${list(NEVER_ON_TABLES)}))
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 NULLS FIRST`;
}

async function extraGrants(db: Kysely<CatalogDb>, schema: string): Promise<ExtraGrant[]> {
  return (await sql<ExtraGrant>`${sql.raw(extraGrantsSql(schema))}`.execute(db)).rows;
}

/**
 * The same, read with the catalog at every cycle (rows of `table`): a right granted while `run`
 * is up is taken back before the next push (`revokeExtraGrants`), not only when the mirror is
 * opened. Reads only.
 */
export function extraGrantsQuery(db: Kysely<CatalogDb>, schema: string): CompiledQuery<{ table: string }> {
  return sql<{ table: string }>`SELECT g."table" FROM (${sql.raw(extraGrantsSql(schema))}) g`.compile(db);
}

const who = (g: ExtraGrant) => g.grantee ?? 'PUBLIC';
const where = (schema: string, g: ExtraGrant) => `${schema}.${g.table}${g.grantor === null ? '' : ` (granted by ${g.grantor})`}`;
const key = (g: ExtraGrant, privilege: string) => JSON.stringify([g.table, g.grantee, g.grantor, privilege]);

/** For `wsmirror check`: one line per role, table and grantor. Reads only. */
export async function extraGrantProblems(db: Kysely<CatalogDb>, schema: string): Promise<string[]> {
  return (await extraGrants(db, schema)).map((g) => `role ${who(g)} has ${g.privileges.join(', ')} on ${where(schema, g)}, `
    + `which lets it ${whatItAllows(g.privileges)}: the next sync revokes it (a writer needs SELECT, INSERT, UPDATE, DELETE only)`);
}

/** What these rights let a role do to the daemon, for the messages. */
function whatItAllows(privileges: readonly string[]): string {
  const acts = privileges.some((p) => p !== 'MAINTAIN') ? ['run code or write entries as the daemon\'s role'] : [];
  if (privileges.includes('MAINTAIN')) acts.push('lock the table against the daemon and every local edit (MAINTAIN: LOCK TABLE, VACUUM FULL, CLUSTER)');
  return acts.join(', or ');
}

/**
 * On an open for writing, and at a cycle whose catalog read found some: those rights revoked, one warning per role, and one per right that is
 * still there after. Only the owner's own grants can be revoked by it (a REVOKE takes back what
 * its grantor granted), and one whose grantee granted it on in turn (WITH GRANT OPTION) only with
 * CASCADE, which takes those grants too: every grant of a right descends from one of the owner's.
 * Costs one catalog read when there are none.
 */
export async function revokeExtraGrants(db: Kysely<CatalogDb>, schema: string): Promise<string[]> {
  const grants = await extraGrants(db, schema);
  if (grants.length === 0) return [];
  const owners = grants.filter((g) => g.grantor === null);
  if (owners.length > 0) {
    await sql.raw(owners.map((g) => `REVOKE ${g.privileges.join(', ')} ON ${quoteIdent(schema)}.${quoteIdent(g.table)} `
      + `FROM ${g.grantee === null ? 'PUBLIC' : quoteIdent(g.grantee)} CASCADE`).join(';\n')).execute(db);
  }
  // What is said revoked is what is gone: read again.
  const left = await extraGrants(db, schema);
  const remaining = new Set(left.flatMap((g) => g.privileges.map((p) => key(g, p))));
  const revoked = grants.flatMap((g) => {
    const privileges = g.privileges.filter((p) => !remaining.has(key(g, p)));
    return privileges.length === 0 ? [] : [{ ...g, privileges }];
  });
  const warnings = [...Map.groupBy(revoked, who)].map(([role, of]) => {
    const privileges = [...new Set(of.flatMap((g) => g.privileges))].sort();
    return `role ${role} had ${privileges.join(', ')} on ${of.map((g) => where(schema, g)).join(', ')}, `
      + `which let it ${whatItAllows(privileges)}: revoked; a writer needs SELECT, INSERT, UPDATE, DELETE only (GRANT ALL gives more)`;
  });
  // Not expected (every grant descends from the owner's), but never said revoked when it is not.
  for (const g of left) {
    warnings.push(`role ${who(g)} still has ${g.privileges.join(', ')} on ${where(schema, g)}, which lets it ${whatItAllows(g.privileges)}: `
      + `the daemon's role could not revoke it; as ${g.grantor ?? 'the owner'} or a superuser: REVOKE ${g.privileges.join(', ')} ON `
      + `${quoteIdent(schema)}.${quoteIdent(g.table)} FROM ${g.grantee === null ? 'PUBLIC' : quoteIdent(g.grantee)} CASCADE`);
  }
  return warnings;
}
