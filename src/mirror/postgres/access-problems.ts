import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { captureOwnerProblems } from './capture-grants.ts';
import { foreignTriggers } from './foreign-triggers.ts';
import { extraGrantProblems } from './table-grants.ts';
import { noCreateMessage } from './create-privilege.ts';
import { READ_ONLY_SQL, readOnlyProblem, temporaryProblem, type ReadOnly } from './creation-problems.ts';

/**
 * What would keep the daemon's role from writing the mirror's tables in `schema` and creating
 * new ones, one line each (see DialectDriver.accessProblems). Reads only.
 */
export async function accessProblems(
  db: Kysely<CatalogDb>, schema: string, tables: readonly string[], createdWhenMissing: readonly string[],
): Promise<string[]> {
  const problems: string[] = [];
  const { rows: [role] } = await sql<{ role: string; db: string; usage: boolean; create: boolean; temporary: boolean } & ReadOnly>`SELECT current_user AS role,
    current_database() AS db, ${sql.raw(READ_ONLY_SQL)},
    has_schema_privilege(current_user, ${schema}, 'USAGE') AS usage,
    has_schema_privilege(current_user, ${schema}, 'CREATE') AS create,
    has_database_privilege(current_database(), 'TEMPORARY') AS temporary`.execute(db);
  if (!role!.usage) problems.push(`role ${role!.role} has no USAGE on schema ${schema}`);
  if (!role!.create) problems.push(noCreateMessage(role!.role, schema));
  problems.push(...temporaryProblem(role!), ...readOnlyProblem(role!));
  // Rows are written with INSERT, UPDATE and DELETE; schema changes and capture triggers need the owner.
  const { rows } = await sql<{ name: string; owns: boolean; select: boolean; insert: boolean; update: boolean; delete: boolean }>`SELECT c.relname AS name,
      pg_has_role(current_user, c.relowner, 'USAGE') AS owns,
      has_table_privilege(c.oid, 'SELECT') AS select, has_table_privilege(c.oid, 'INSERT') AS insert,
      has_table_privilege(c.oid, 'UPDATE') AS update, has_table_privilege(c.oid, 'DELETE') AS delete
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND c.relname = ANY(${[...tables, ...createdWhenMissing]}) ORDER BY c.relname`.execute(db);
  for (const r of rows) {
    const missing = (['select', 'insert', 'update', 'delete'] as const).filter((p) => !r[p]).map((p) => p.toUpperCase());
    if (missing.length > 0) problems.push(`role ${role!.role} has no ${missing.join(', ')} on ${schema}.${r.name}`);
    if (!r.owns) problems.push(`role ${role!.role} does not own ${schema}.${r.name} (schema changes would fail)`);
  }
  const found = new Set(rows.map((r) => r.name));
  for (const name of tables) if (!found.has(name)) problems.push(`table ${schema}.${name} is missing`);
  problems.push(...await captureOwnerProblems(db, schema));
  problems.push(...(await foreignTriggers(db, schema)).map((t) => t.message), ...await extraGrantProblems(db, schema));
  return problems;
}
