// The Postgres side of the bench scenarios: where they find a server, and how they clean up.
import pg from 'pg';

/** The server the scenarios use: `WSMIRROR_TEST_PG_URL`, else the local one. */
export const BENCH_PG_URL = process.env['WSMIRROR_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Drops a scenario's schema and everything in it. */
export async function dropSchema(pgUrl: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await c.end();
  }
}
