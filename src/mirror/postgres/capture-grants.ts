import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteIdent } from '../sql-text.ts';

/**
 * The capture functions write the outbox as their owner (SECURITY DEFINER) and are executable by
 * that owner only (capture-triggers.ts). A schema change makes them again so; a restore may not:
 * without privileges (`pg_dump -x`) they come back executable by PUBLIC, the default of a new
 * function, and without owners (`pg_dump -O`) owned by the role that restored them.
 */
interface ExposedFunction {
  /** Schema-qualified and quoted, with its (empty) argument list. */
  fn: string;
  /** Its name and its table's, as messages show them. */
  label: string;
  /** Its table, schema-qualified, when a trigger of one calls it. */
  table: string | null;
  owner: string;
  /** The session's role may act as its owner. */
  owned: boolean;
  /** Roles other than its owner that may execute it: `null` for PUBLIC. */
  executors: (string | null)[];
}

async function exposedFunctions(db: Kysely<CatalogDb>, schema: string): Promise<{ role: string; functions: ExposedFunction[] }> {
  const { rows } = await sql<{ name: string; table: string | null; owner: string; owned: boolean; executors: (string | null)[] }>`
    SELECT p.proname::text AS name, pg_get_userbyid(p.proowner)::text AS owner,
      pg_has_role(current_user, p.proowner, 'USAGE') AS owned,
      (SELECT c.relname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.tgfoid = p.oid LIMIT 1) AS table,
      ARRAY(SELECT CASE WHEN a.grantee = 0 THEN NULL ELSE pg_get_userbyid(a.grantee)::text END
        FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
        WHERE a.grantee <> p.proowner AND a.privilege_type = 'EXECUTE') AS executors
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ${schema} AND p.proname LIKE ${'\\_wsmirror\\_capture\\_%'}
    ORDER BY p.proname`.execute(db);
  const exposed = rows.filter((r) => !r.owned || r.executors.length > 0);
  if (exposed.length === 0) return { role: '', functions: [] };
  const role = (await sql<{ role: string }>`SELECT current_user AS role`.execute(db)).rows[0]!.role;
  const functions = exposed.map((r) => ({
    fn: `${quoteIdent(schema)}.${quoteIdent(r.name)}()`,
    label: `${schema}.${r.name}${r.table === null ? '' : ` of ${schema}.${r.table}`}`,
    table: r.table === null ? null : `${schema}.${r.table}`,
    owner: r.owner,
    owned: r.owned,
    executors: r.executors,
  }));
  return { role, functions };
}

/** A capture function another role owns runs as that role, and only its owner can make it the daemon's again. */
function foreignOwnerMessage(f: ExposedFunction, role: string): string {
  return `capture function ${f.label} is owned by role ${f.owner}, not by ${role}: it writes the outbox as ${f.owner} `
    + `(a restore that did not keep owners, pg_dump -O?), and a schema change of its table would fail: ALTER FUNCTION ${f.fn} OWNER TO ${quoteIdent(role)}`;
}

/** For `wsmirror check`: the capture functions the daemon's role cannot put right itself. Reads only. */
export async function captureOwnerProblems(db: Kysely<CatalogDb>, schema: string): Promise<string[]> {
  const { role, functions } = await exposedFunctions(db, schema);
  return functions.filter((f) => !f.owned).map((f) => foreignOwnerMessage(f, role));
}

/**
 * On an open for writing: EXECUTE revoked again from every role but the owner, on the functions
 * the daemon's role owns; the others are named. Returns what it did and found, one warning each.
 * Costs one catalog read when nothing is amiss.
 */
export async function secureCaptureFunctions(db: Kysely<CatalogDb>, schema: string): Promise<string[]> {
  const { role, functions } = await exposedFunctions(db, schema);
  const warnings: string[] = [];
  const revocable = functions.filter((f) => f.owned);
  if (revocable.length > 0) {
    await sql.raw(revocable.map((f) => `REVOKE ALL ON FUNCTION ${f.fn} FROM ${f.executors.map((e) => (e === null ? 'PUBLIC' : quoteIdent(e))).join(', ')}`)
      .join(';\n')).execute(db);
    const who = [...new Set(revocable.flatMap((f) => f.executors.map((e) => e ?? 'PUBLIC')))].join(', ');
    const tables = [...new Set(revocable.map((f) => f.table ?? f.label))].sort().join(', ');
    warnings.push(`${who} could execute the capture functions of ${tables}, which write the outbox as ${role} `
      + `(a restore that kept no privileges, pg_dump -x?): EXECUTE revoked, only ${role} has it again`);
  }
  for (const f of functions) if (!f.owned) warnings.push(foreignOwnerMessage(f, role));
  return warnings;
}
