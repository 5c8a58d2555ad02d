import type pg from 'pg';
import { parse } from 'pg-connection-string';

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
  return { ...config, application_name: purpose === undefined ? name : `${name} ${purpose}` } as pg.ClientConfig;
}
