import { SET_SEARCH_PATH_SQL } from './search-path.ts';
import { quoteIdent } from '../sql-text.ts';
import { connectionConfig } from './connection-config.ts';
import { ClientEndedWhenConnectFails } from './ending-client.ts';

/**
 * What would keep the role of `connectionString` from creating the mirror in `schema` at its first
 * sync, one line each, naming the privilege (see Dialect.creationProblems). Reads only.
 */
export async function creationProblems(connectionString: string, schema: string): Promise<string[]> {
  const client = new ClientEndedWhenConnectFails(connectionConfig(connectionString));
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(SET_SEARCH_PATH_SQL);
    const { rows: [r] } = await client.query<{ role: string; db: string; exists: boolean; dbCreate: boolean; temporary: boolean; usage: boolean; create: boolean } & ReadOnly>(
      `SELECT current_user AS role, current_database() AS db, ${READ_ONLY_SQL},
        EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists,
        has_database_privilege(current_database(), 'CREATE') AS "dbCreate",
        has_database_privilege(current_database(), 'TEMPORARY') AS temporary,
        EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1 AND has_schema_privilege(oid, 'USAGE')) AS usage,
        EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1 AND has_schema_privilege(oid, 'CREATE')) AS create`,
      [schema],
    );
    const problems: string[] = [];
    if (!r!.exists && !r!.dbCreate) {
      problems.push(`role ${r!.role} cannot create schema ${schema}: it has no CREATE on database ${r!.db} (or create it for the role: CREATE SCHEMA ${quoteIdent(schema)} AUTHORIZATION ${quoteIdent(r!.role)})`);
    }
    if (r!.exists && !r!.usage) problems.push(`role ${r!.role} has no USAGE on schema ${schema}`);
    if (r!.exists && !r!.create) problems.push(`role ${r!.role} has no CREATE on schema ${schema} (the first sync creates the mirror's tables there)`);
    problems.push(...temporaryProblem(r!), ...readOnlyProblem(r!));
    return problems;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Whether the session can write at all: the columns READ_ONLY_SQL selects. */
export interface ReadOnly {
  readOnly: boolean;
  standby: boolean;
}

export const READ_ONLY_SQL = `current_setting('transaction_read_only') = 'on' AS "readOnly", pg_is_in_recovery() AS standby`;

/**
 * A server or a session that writes nothing: every write of a sync would fail ("cannot execute
 * INSERT in a read-only transaction"), after the checks of privileges all passed.
 */
export function readOnlyProblem(r: { role: string } & ReadOnly): string[] {
  if (r.standby) return ['the server is a hot standby (pg_is_in_recovery()), which writes nothing: point mirror.url at the primary'];
  if (!r.readOnly) return [];
  return [`sessions of role ${r.role} are read-only (transaction_read_only is on: default_transaction_read_only is set for the role, `
    + `the database or in the URL): a sync could write nothing; ALTER ROLE ${quoteIdent(r.role)} SET default_transaction_read_only = off, or find where it is set`];
}

/** Rows are staged in temporary tables before they are written (copy-upsert.ts). */
export function temporaryProblem(r: { role: string; db: string; temporary: boolean }): string[] {
  return r.temporary ? [] : [`role ${r.role} has no TEMPORARY on database ${r.db} (wsmirror stages rows in temporary tables)`];
}
