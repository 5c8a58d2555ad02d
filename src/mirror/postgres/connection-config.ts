import type pg from 'pg';
import { parse } from 'pg-connection-string';
import pgPass from 'pgpass';

/** What wsmirror's sessions are called in `pg_stat_activity` when the URL names none. */
const APPLICATION_NAME = 'wsmirror';

/**
 * The pg configuration of a connection to the mirror URL, named in `pg_stat_activity` for what
 * it does: `wsmirror` (the pool, check's queries) or `wsmirror sync lock`. An application_name in
 * the URL takes the place of `wsmirror` in both (`bi-mirror`, `bi-mirror sync lock`): two
 * daemons on one server can be told apart, and the lock's session still says what it is. The
 * URL is parsed here, as pg parses it: given to pg as a connection string, its values would win
 * over those set beside it.
 */
export function connectionConfig(connectionString: string, purpose?: 'sync lock'): pg.ClientConfig {
  const config = parse(connectionString);
  const name = config.application_name || APPLICATION_NAME;
  return {
    ...config,
    application_name: purpose === undefined ? name : `${name} ${purpose}`,
    password: config.password || passwordOutsideUrl,
  } as pg.ClientConfig;
}

/**
 * The password when the URL has none, asked for only when the server wants one, found as libpq
 * finds it: PGPASSWORD, else the password file (PGPASSFILE, default ~/.pgpass; one that group or
 * others can read is ignored with a warning). pg would read the file itself, but warns on every
 * connection that its doing so is deprecated: the file is read here instead, as pg advises.
 */
function passwordOutsideUrl(connection: pg.ClientConfig): Promise<string | undefined> {
  const fromEnv = process.env.PGPASSWORD;
  if (fromEnv) return Promise.resolve(fromEnv);
  return new Promise((resolve) => pgPass(connection as Parameters<typeof pgPass>[0], resolve));
}
