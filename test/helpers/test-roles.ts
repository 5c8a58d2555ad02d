import type pg from 'pg';
import { quoteId, testPgUrl } from './dialects.ts';

/**
 * Roles a suite creates on the shared test server (named with a suffix of its own, so parallel
 * suites never meet), and how it connects as them.
 */

/** The test server's URL as `role`, without a password (the test server trusts local clients). */
export function pgUrlAs(role: string): string {
  if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
  return Object.assign(new URL(testPgUrl), { username: role, password: '' }).toString();
}

/** Drops the roles, and first what they own or were granted in this database. */
export async function dropRoles(admin: pg.Client, ...roles: string[]): Promise<void> {
  for (const role of roles) {
    await admin.query(`DROP OWNED BY ${quoteId(role)}`).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${quoteId(role)}`);
  }
}

/** Read access for `reader` to the mirror `owner` keeps in `schema`, exactly as docs/querying.md grants it (no outbox). */
export async function grantReadAccess(admin: pg.Client, schema: string, owner: string, reader: string): Promise<void> {
  const s = quoteId(schema);
  await admin.query(`GRANT USAGE ON SCHEMA ${s} TO ${quoteId(reader)}`);
  await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${quoteId(reader)}`);
  await admin.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${quoteId(owner)} IN SCHEMA ${s} GRANT SELECT ON TABLES TO ${quoteId(reader)}`);
  await admin.query(`REVOKE SELECT ON ${s}."_wsmirror_outbox" FROM ${quoteId(reader)}`);
}
