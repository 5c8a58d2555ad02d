import type pg from 'pg';
import { parse } from 'pg-connection-string';
import { passwordFilePath, passwordFromFile } from './password-file.ts';

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
 * finds it: PGPASSWORD (unless empty), else the password file (password-file.ts). pg would read
 * the file itself, but with rules of its own (the last matching line winning) and a deprecation
 * warning on every connection. Without one, the connection fails saying where it was looked for,
 * not with what the server's authentication makes of no password. pg leaves the session open
 * when this fails: clients of this configuration are ClientEndedWhenConnectFails (ending-client.ts).
 */
async function passwordOutsideUrl(connection: pg.ClientConfig): Promise<string> {
  const fromEnv = process.env.PGPASSWORD;
  if (fromEnv) return fromEnv;
  const { file, named } = passwordFilePath();
  const found = await passwordFromFile(file, connection);
  if ('password' in found) return found.password;
  const env = fromEnv === undefined ? 'PGPASSWORD is not set' : 'PGPASSWORD is empty';
  throw new Error(`the server asks for a password and no password was found: none in the URL, ${env}, and the password file ${file} (${named}) ${found.none}`);
}
