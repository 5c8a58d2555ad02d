import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { sessionEndedError } from './connect-failure.ts';
import { connectionConfig } from './connection-config.ts';
import { ClientEndedWhenConnectFails } from './ending-client.ts';
import { SET_SEARCH_PATH_SQL } from './search-path.ts';
import { withServerDetail } from './server-detail.ts';

/** Session settings every connection of the mirror gets. */
const SESSION_SQL = [
  // First: nothing a role created on its search path may stand in for a function (search-path.ts).
  SET_SEARCH_PATH_SQL,
  // Dates print as YYYY-MM-DD and comments never see backslash escapes.
  `SET DateStyle = 'ISO, YMD'`,
  `SET standard_conforming_strings = on`,
  `SET TimeZone = 'UTC'`,
  // CREATE … IF NOT EXISTS would otherwise log a notice on every run.
  `SET client_min_messages = warning`,
].join('; ');

/** Types as the codec expects them: `date` as text, `bigint` as a number (ids fit in 2^53). */
function typeParsers(): pg.TypeOverrides {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.DATE, (v: string) => v);
  types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  return types;
}

/** The pool of the mirror's sessions: four at most, each set up as SESSION_SQL says. */
export function mirrorPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({
    ...connectionConfig(connectionString),
    Client: ClientEndedWhenConnectFails,
    max: 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    types: typeParsers(),
    // Awaited before the client is handed out: a query sent beside it would be queued behind it,
    // which pg warns about (and pg 9 refuses). A server that closes idle sessions
    // (idle_session_timeout) makes every cycle open new clients.
    onConnect: async (client) => {
      await client.query(SESSION_SQL);
    },
  });
  // A client losing its server must not crash the process: pg emits 'error' on it, heard by the
  // pool only while the client is idle; checked out (a write's transaction, a read), by this
  // listener. Its queries fail with the cause, which is the report (sessionEndedError); pg-pool
  // discards a client so ended when it comes back.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * The pool as Kysely sees it, its errors told as withServerDetail tells them (a DETAIL, the
 * setting at fault) and a session that ended as sessionEndedError does: the driver's reads go
 * through it. A cursor (a stream) is handed back as is.
 */
export function explainingPool(pool: pg.Pool): PostgresPool {
  const explained = (error: unknown) => {
    throw sessionEndedError(withServerDetail(error));
  };
  return {
    async connect() {
      const client = await pool.connect().catch(explained);
      const query = (...args: Parameters<pg.PoolClient['query']>) => {
        const result: unknown = (client.query as (...a: unknown[]) => unknown)(...args);
        return result instanceof Promise ? result.catch(explained) : result;
      };
      // What else of the client Kysely uses: its release (discarding a broken one) and its pid.
      const { processID } = client as unknown as { processID: number };
      return { query, processID, release: (discard?: boolean) => client.release(discard) } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
    options: pool.options,
  };
}
