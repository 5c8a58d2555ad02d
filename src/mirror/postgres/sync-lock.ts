import pg from 'pg';
import { ConfigError } from '../../errors.ts';
import type { SyncLock } from '../dialect.ts';
import type { MirrorLocation } from '../mirror-url.ts';

/**
 * The sync lock of a Postgres mirror: a session advisory lock keyed by the mirror's schema, held
 * on a connection of its own until it closes. The server drops it when that session ends, so a
 * process killed -9 leaves none behind. Needs no privilege and no schema (it is taken before the
 * schema is created); SQL clients never take it.
 */

/** The advisory lock class of wsmirror's sync locks ('wsmr'); the schema's hash is the object. */
const LOCK_CLASS = 0x77736d72;

/** Takes the lock; undefined when another session holds it. */
export async function takePostgresSyncLock(location: Extract<MirrorLocation, { dialect: 'postgres' }>, schema: string): Promise<SyncLock | undefined> {
  const client = new pg.Client({ connectionString: location.connectionString, application_name: 'wsmirror sync lock', connectionTimeoutMillis: 10_000 });
  // A lost connection loses the lock; the next query of the mirror reports the server gone.
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS taken', [LOCK_CLASS, schema]);
    if (rows[0]?.taken === true) return { release: () => client.end().catch(() => {}) };
  } catch (error) {
    await client.end().catch(() => {});
    throw new ConfigError(`cannot reach the Postgres mirror ${location.display}: ${(error as Error).message}`, { cause: error });
  }
  await client.end().catch(() => {});
  return undefined;
}
