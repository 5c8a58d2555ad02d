import type { Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { MirrorLockedError } from '../errors.ts';
import { isLockTimeout, lockHolders, lockedMessage } from './schema-change-locks.ts';

/**
 * How long the daemon's writes wait for a lock, row locks above all: a pull's upsert or delete of
 * a row an application's open transaction has changed waits for that transaction to end, and
 * without a bound the whole cycle (every table's pull and push) waited with it. 10 s is the busy
 * timeout of a SQLite mirror (sqlite/connection.ts), so that an open transaction costs the cycle
 * the same on both; it covers an application's ordinary transactions.
 */
export const ROW_LOCK_TIMEOUT = '10s';

/** Sets the bound for the rest of the transaction (SET LOCAL), as a SELECT to go beside the writer marker. */
export const ROW_LOCK_TIMEOUT_SQL = `set_config('lock_timeout', '${ROW_LOCK_TIMEOUT}', true)`;

/**
 * `error` as a write reports it: when a lock wait timed out, a MirrorLockedError naming the
 * sessions that hold locks on the relation the server names in the error's context ("while
 * updating tuple (0,5) in relation …"; every table of the schema when it names none). The wait
 * has ended by now, so pg_blocking_pids has nothing to say: a session holding a row lock holds
 * the table's ROW EXCLUSIVE (or ROW SHARE) lock until its transaction ends, which pg_locks shows.
 * As for schema changes, their query text is left out (it may hold data).
 */
export async function rowLockTimeoutError(error: unknown, db: Kysely<CatalogDb>, schema: string, ownPid: number): Promise<unknown> {
  if (!isLockTimeout(error)) return error;
  const where = (error as { where?: unknown }).where;
  const relation = typeof where === 'string' ? /in relation "((?:[^"]|"")+)"/.exec(where)?.[1]?.replaceAll('""', '"') : undefined;
  const holders = await lockHolders(db, schema, relation === undefined ? undefined : [relation], ownPid, { rowWriters: true });
  const needs = `wsmirror's write to ${relation ?? `the mirror (schema ${schema})`} waited over ${ROW_LOCK_TIMEOUT} for rows other sessions held locked`
    + ' (it is tried again at every cycle, and nothing is lost: the rows are written once they are free)';
  return new MirrorLockedError(lockedMessage(needs, holders), { cause: error });
}
