import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { MirrorLockedError } from '../errors.ts';
import type { SchemaChangeLocks } from '../dialect-driver.ts';
import type { SqlNames } from '../sql-text.ts';

/**
 * How long a schema change waits for a lock. ALTER, DROP and DROP TRIGGER need a table's ACCESS
 * EXCLUSIVE lock, which waits for every query that reads the table (or its view) to end, and
 * every later query of the table queues behind that wait: without a bound, one long BI query or
 * a transaction left open stalled the daemon's cycle and every dashboard on the table for as
 * long as it lasted. A few seconds cover the dashboards' own queries; it is what a dashboard
 * waits at most, per attempt.
 */
export const SCHEMA_LOCK_TIMEOUT = '5s';

/** SQLSTATE lock_not_available: `lock_timeout` expired. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * The statements that take the locks of `locks` within the write transaction, views first:
 * a query of a view locks the view before its tables, and taking them the other way round
 * deadlocks with a query that arrived while the schema change waited. The bound stays on the
 * transaction (SET LOCAL), so its later DDL cannot wait without bound either.
 */
export function schemaChangeLockSql(names: SqlNames, locks: SchemaChangeLocks): string[] {
  return [
    `SET LOCAL lock_timeout = '${SCHEMA_LOCK_TIMEOUT}'`,
    // LOCK TABLE on a view would lock every table its query reads too (the referenced tables,
    // the option catalog); this no-op ALTER takes the view's own lock only.
    ...locks.views.map((view) => `ALTER VIEW IF EXISTS ${names.qualify(view)} OWNER TO CURRENT_USER`),
    ...(locks.tables.length === 0 ? [] : [`LOCK TABLE ${locks.tables.map((t) => names.qualify(t)).join(', ')} IN ACCESS EXCLUSIVE MODE`]),
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
  const needs = `the change needs an exclusive lock on ${names.join(', ')}, and other sessions held it for over ${SCHEMA_LOCK_TIMEOUT}`;
  return new MirrorLockedError(lockedMessage(needs, holders), { cause: error });
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

/** `needs`, then who held it; `holders`: undefined when they could not be looked up. */
export function lockedMessage(needs: string, holders: readonly Holder[] | undefined): string {
  if (holders === undefined) return `${needs} (pg_locks could not be read to name them)`;
  if (holders.length === 0) return `${needs} (they had ended when wsmirror looked)`;
  const shown = holders.slice(0, SHOWN).map(describeHolder).join('; ');
  const more = holders.length > SHOWN ? `; and ${holders.length - SHOWN} more sessions` : '';
  const pids = holders.map((h) => h.pid);
  const end = pids.length === 1 ? `SELECT pg_terminate_backend(${pids[0]})` : `SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[${pids.join(', ')}]) AS pid`;
  return `${needs}: ${shown}${more}; wait for ${pids.length === 1 ? 'it' : 'them'} to end, or end ${pids.length === 1 ? 'it' : 'them'} now (${end})`;
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
