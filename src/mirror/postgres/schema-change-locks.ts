import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { MirrorLockedError } from '../errors.ts';
import type { SchemaChangeLocks } from '../dialect-driver.ts';
import { quoteLiteral, type SqlNames } from '../sql-text.ts';

/**
 * How long a schema change waits for its locks. ALTER, DROP and DROP TRIGGER need a table's ACCESS
 * EXCLUSIVE lock, which waits for every query that reads the table (or its view) to end, and
 * every later query of the table queues behind that wait: without a bound, one long BI query or
 * a transaction left open stalled the daemon's cycle and every dashboard on the table for as
 * long as it lasted. A few seconds cover the dashboards' own queries; a dashboard waits behind
 * one attempt at them at a time (takeSchemaChangeLocks). Its DDL, once they are held, waits as
 * long at most for any other lock.
 */
export const SCHEMA_LOCK_TIMEOUT = '5s';

/** SQLSTATE lock_not_available: `lock_timeout` expired. */
const LOCK_NOT_AVAILABLE = '55P03';

/** The whole wait for a schema change's locks, over its attempts (SCHEMA_LOCK_TIMEOUT). */
const SCHEMA_LOCK_WAIT_MS = 5_000;

/** Between two attempts: the queries that waited behind the last one go first. */
const ATTEMPT_PAUSE_MS = 20;

const SAVEPOINT = '"_wsmirror_locks"';

/**
 * Takes the locks of every scope of `scopes` within the write transaction `db`, in order, each
 * scope views first (a query of a view locks the view before its tables), without ever waiting
 * long while holding one. A query holds what it read first while it waits for the rest, and locks
 * in its own order (a join of two readable views, a view of a user's before the view it reads):
 * a schema change that held a lock such a query waited for, while it waited for one the query
 * held, deadlocked with it, and Postgres ended one of the two after deadlock_timeout. So the
 * locks are taken in attempts, each within half of deadlock_timeout in all, and an attempt that
 * does not get them all gives back those it got (a savepoint) and the change tries again, for 5 s
 * in all: a query waits behind an attempt, never long enough for the deadlock check. Returns the
 * scope whose locks did not come in time, with the error to report (MirrorLockedError naming the
 * sessions holding them, looked up on `pool`; `ownPid` is the transaction's), or undefined once
 * all are held. The later DDL of the transaction waits at most 5 s for a lock (SET LOCAL).
 */
export async function takeSchemaChangeLocks(
  db: Kysely<CatalogDb>, pool: Kysely<CatalogDb>, names: SqlNames, schema: string, scopes: readonly SchemaChangeLocks[], ownPid: number,
): Promise<{ scope: number; error: unknown } | undefined> {
  const deadline = Date.now() + SCHEMA_LOCK_WAIT_MS;
  const attempt = `SAVEPOINT ${SAVEPOINT}; ${attemptSql(names, scopes)}; SET LOCAL lock_timeout = '${SCHEMA_LOCK_TIMEOUT}'; RELEASE SAVEPOINT ${SAVEPOINT}`;
  for (;;) {
    try {
      // One round trip an attempt: its bound counts the server's time only.
      await sql.raw(attempt).execute(db);
      return undefined;
    } catch (error) {
      await sql.raw(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`).execute(db);
      if (!isLockTimeout(error)) throw error;
      const scope = Number((error as { hint?: unknown }).hint);
      if (!Number.isInteger(scope) || scopes[scope] === undefined) throw error;
      if (Date.now() >= deadline) return { scope, error: await lockTimeoutError(error, pool, schema, scopes[scope], ownPid) };
    }
    await new Promise((resolve) => setTimeout(resolve, ATTEMPT_PAUSE_MS));
  }
}

/**
 * One attempt, as a DO block: before each lock, lock_timeout is set to what is left of the
 * attempt (read when a wait begins, it bounds that wait); a lock that does not come in time ends
 * it with lock_not_available, whose HINT is the index of the scope it was for.
 */
function attemptSql(names: SqlNames, scopes: readonly SchemaChangeLocks[]): string {
  const bound = 'PERFORM pg_catalog.set_config(\'lock_timeout\', GREATEST(1, budget - extract(epoch FROM pg_catalog.clock_timestamp() - started) * 1000)::int::text || \'ms\', true);';
  const body = scopes.map((locks, i) => [`scope := ${i};`, ...lockStatements(names, locks).map((s) => `${bound} EXECUTE ${quoteLiteral(s)};`)].join(' ')).join(' ');
  let tag = '$wsmirror_locks$';
  while (body.includes(tag)) tag = `${tag.slice(0, -1)}_$`;
  return `DO ${tag} DECLARE started timestamptz := pg_catalog.clock_timestamp(); `
    + 'budget float8 := extract(epoch FROM pg_catalog.current_setting(\'deadlock_timeout\')::interval) * 500; scope int; '
    + `BEGIN ${body} EXCEPTION WHEN lock_not_available THEN RAISE lock_not_available USING MESSAGE = SQLERRM, HINT = scope::text; END ${tag}`;
}

/** One statement a lock (a table locked alone waits alone: its wait is bounded by itself). */
function lockStatements(names: SqlNames, locks: SchemaChangeLocks): string[] {
  return [
    // LOCK TABLE on a view would lock every table its query reads too (the referenced tables,
    // the option catalog); this no-op ALTER takes the view's own lock only.
    ...locks.views.map((view) => `ALTER VIEW IF EXISTS ${names.qualify(view)} OWNER TO CURRENT_USER`),
    ...locks.tables.map((table) => `LOCK TABLE ${names.qualify(table)} IN ACCESS EXCLUSIVE MODE`),
  ];
}

export interface Holder {
  pid: number;
  relations: string[];
  application: string | null;
  user: string | null;
  state: string | null;
  openFor: string | null;
}

/**
 * `error` as the schema change reports it: when its lock wait timed out, a MirrorLockedError
 * naming the sessions that held the relations (looked up on `db`, another connection, since the
 * transaction is aborted; `ownPid` is the transaction's). Their query text is left out: it may
 * hold data (values in a WHERE clause), and the message is stored in the mirror, where every
 * reader sees it; the pid leads an administrator to it.
 */
export async function lockTimeoutError(
  error: unknown, db: Kysely<CatalogDb>, schema: string, locks: SchemaChangeLocks, ownPid: number,
): Promise<unknown> {
  if (!isLockTimeout(error)) return error;
  const names = [...locks.views, ...locks.tables];
  const holders = await lockHolders(db, schema, names, ownPid, { rowWriters: false });
  const needs = `the change needs an exclusive lock on ${names.join(', ')}, and did not get it in ${SCHEMA_LOCK_TIMEOUT} of attempts`;
  return new MirrorLockedError(lockedMessage(needs, holders, { waitedMs: SCHEMA_LOCK_WAIT_MS }), { cause: error });
}

export function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;
}

/**
 * The sessions other than `ownPid` holding locks on `names` of `schema` (every relation of it
 * when undefined); undefined when pg_locks cannot be read. `rowWriters`: only the locks of
 * sessions that may hold row locks or block row writes, not those of plain readers (ACCESS
 * SHARE) or of VACUUM and ANALYZE (SHARE UPDATE EXCLUSIVE).
 */
export async function lockHolders(
  db: Kysely<CatalogDb>, schema: string, names: readonly string[] | undefined, ownPid: number, opts: { rowWriters: boolean },
): Promise<Holder[] | undefined> {
  const readers = opts.rowWriters ? ['AccessShareLock', 'ShareUpdateExclusiveLock'] : [];
  return sql<Holder>`SELECT l.pid, array_agg(DISTINCT c.relname::text ORDER BY c.relname::text) AS relations,
      a.application_name AS application, a.usename AS user, a.state,
      date_trunc('second', now() - a.xact_start)::text AS "openFor"
    FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.granted AND l.pid <> ${ownPid} AND n.nspname = ${schema}
      AND (${names === undefined} OR c.relname = ANY(${names ?? []}::text[])) AND NOT l.mode = ANY(${readers}::text[])
    GROUP BY l.pid, a.application_name, a.usename, a.state, a.xact_start
    ORDER BY a.xact_start NULLS LAST, l.pid`.execute(db).then((r) => r.rows, () => undefined);
}

const SHOWN = 3;

/**
 * `needs`, then who held it; `holders`: undefined when they could not be looked up. `waitedMs`:
 * how long the locks were tried for. When every holder's transaction began within that time, no
 * session held the lock long: queries that kept starting and ending did (dashboards refreshing),
 * and ending them would gain nothing, so the message says so instead of offering to end them.
 */
export function lockedMessage(needs: string, holders: readonly Holder[] | undefined, options: { waitedMs?: number } = {}): string {
  if (holders === undefined) return `${needs} (pg_locks could not be read to name them)`;
  if (holders.length === 0) return `${needs} (they had ended when wsmirror looked)`;
  const shown = holders.slice(0, SHOWN).map(describeHolder).join('; ');
  const more = holders.length > SHOWN ? `; and ${holders.length - SHOWN} more sessions` : '';
  const young = options.waitedMs !== undefined
    && holders.every((h) => (secondsOf(h.openFor) ?? Infinity) * 1000 < options.waitedMs!);
  if (young) {
    return `${needs}: queries kept reading ${holders.length === 1 ? 'it' : 'them'}, none for long (those holding it when wsmirror gave up: `
      + `${shown}${more}); it goes in at a cycle when they pause`;
  }
  const pids = holders.map((h) => h.pid);
  const end = pids.length === 1 ? `SELECT pg_terminate_backend(${pids[0]})` : `SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[${pids.join(', ')}]) AS pid`;
  return `${needs}: ${shown}${more}; wait for ${pids.length === 1 ? 'it' : 'them'} to end, or end ${pids.length === 1 ? 'it' : 'them'} now (${end})`;
}

/** `openFor` (an interval as Postgres writes it, `01:02:03` or `2 days 01:02:03`) in seconds; undefined when unknown. */
function secondsOf(openFor: string | null): number | undefined {
  const m = openFor === null ? null : /^(?:(\d+) days? )?(\d+):(\d\d):(\d\d)$/.exec(openFor);
  if (m === null) return undefined;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2]) * 3_600 + Number(m[3]) * 60 + Number(m[4]);
}

function describeHolder(h: Holder): string {
  const who = [h.application ? `application ${JSON.stringify(h.application)}` : undefined, h.user ? `user ${JSON.stringify(h.user)}` : undefined]
    .filter((s) => s !== undefined).join(', ');
  // State and age are visible for another role's sessions only with pg_read_all_stats.
  const doing = h.state === 'active' ? 'running a query' : h.state?.startsWith('idle in transaction') ? 'idle in an open transaction' : undefined;
  const age = h.openFor === null ? undefined : `its transaction open for ${h.openFor}`;
  return [`pid ${h.pid}${who === '' ? '' : ` (${who})`}`, doing, age].filter((s) => s !== undefined).join(', ')
    + ` (on ${h.relations.join(', ')})`;
}
