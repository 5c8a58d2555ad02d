import { createHash } from 'node:crypto';
import pg from 'pg';
import { MirrorSchemaGoneError } from '../../errors.ts';
import type { SyncLock, SyncLockHeld } from '../dialect.ts';
import { MirrorError } from '../errors.ts';
import type { MirrorLogger } from '../mirror-logger.ts';
import type { MirrorLocation } from '../mirror-url.ts';
import { connectFailure } from './connect-failure.ts';
import { connectionConfig } from './connection-config.ts';
import { ClientEndedWhenConnectFails } from './ending-client.ts';
import { SET_SEARCH_PATH_SQL } from './search-path.ts';

/**
 * The sync lock of a Postgres mirror: a session advisory lock keyed by the mirror's schema, held
 * on a connection of its own until it closes. The server drops it when that session ends, so a
 * process killed -9 leaves none behind. Needs no privilege and no schema (it is taken before the
 * schema is created); SQL clients never take it.
 *
 * The session also ends under a live process: a server restart, `pg_terminate_backend`, a
 * middlebox dropping an idle connection. So the connection is kept busy (a query every
 * KEEP_ALIVE_MS, TCP keepalive, the server's idle_session_timeout off for it), a loss is logged
 * and the lock taken again at once on a new connection, and `confirm` (before each cycle and its
 * push) says whether this process still holds it.
 */

/**
 * The lock's key: one 64-bit advisory lock key, 'ws' in its top 16 bits (telling wsmirror's
 * locks from others' in pg_locks, where they show as classid = the top 32 bits, objid = the low
 * 32, objsubid = 1) and the first 48 bits of the SHA-256 of the schema's name below: two
 * mirrors' keys meet about once in 2^48, where the 32-bit hashtext() of older versions let two
 * schemas of one database block each other. The database needs no part in it: advisory locks
 * are the database's own. docs/mirror.md gives the same key in SQL.
 */
const KEY_MARK = 0x7773n;

function lockKey(schema: string): string {
  const hash = createHash('sha256').update(schema, 'utf8').digest();
  return ((KEY_MARK << 48n) | BigInt(`0x${hash.subarray(0, 6).toString('hex')}`)).toString();
}

/** The lock of wsmirror versions before that key: class 'wsmr', the schema's hashtext() as object. */
const OLDER_LOCK_CLASS = 0x77736d72;

/**
 * Shorter than the idle timeouts of NAT gateways, load balancers and firewalls (a few minutes at
 * the least), and cheap: one `SELECT` on a connection that does nothing else.
 */
const KEEP_ALIVE_MS = 30_000;

/** A keep-alive or check that takes longer means a connection that no longer answers. */
const QUERY_TIMEOUT_MS = 10_000;

const TRY_LOCK_SQL = 'SELECT pg_catalog.pg_try_advisory_lock($1::bigint) AS taken, pg_catalog.pg_backend_pid() AS pid';

/**
 * pg_locks shows the advisory locks of every database of the server, each its own: a condition
 * on a lock of this database's (a session of another may lock a schema of the same name).
 */
const THIS_DATABASE_SQL = 'database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())';

/** Which backend holds the lock (granted advisory locks of the one-key form have objsubid 1). */
const HOLDER_SQL = `SELECT pid FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND granted AND ${THIS_DATABASE_SQL}
  AND classid = ($1::bigint >> 32)::oid AND objid = ($1::bigint & 4294967295)::oid AND objsubid = 1`;

/**
 * Who holds the lock ($2: the older versions' form, class $3 and the schema's hashtext(), as in
 * OLDER_LOCK_SQL; else this version's key $1, as in HOLDER_SQL), for the message of a process
 * refused it. Another role's session shows
 * only its pid, user and application name to a role that may not read all statistics.
 */
const HOLDER_DETAIL_SQL = `SELECT l.pid, a.application_name AS application, a.usename AS user,
    pg_catalog.host(a.client_addr) AS client, pg_catalog.to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS since
  FROM pg_catalog.pg_locks l LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.${THIS_DATABASE_SQL} AND l.pid <> pg_catalog.pg_backend_pid()
    AND CASE WHEN $2::boolean
      THEN l.classid = $3::bigint::oid AND l.objid = pg_catalog.hashtext($4)::oid AND l.objsubid = 2
      ELSE l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid AND l.objsubid = 1 END
  ORDER BY l.pid LIMIT 1`;

/**
 * During an upgrade a process of an older version may run beside this one: each must keep the
 * other off the mirror. So the older versions' lock is taken too, once this one's is held; when
 * another session holds it, that is an older wsmirror (refused: true), unless that session
 * holds a lock of this version's form too: then it is a wsmirror of this version on another
 * schema whose hashtext() collides with this one's, which is no reason to stop.
 */
const OLDER_LOCK_SQL = `SELECT pg_catalog.pg_try_advisory_lock($1::int, pg_catalog.hashtext($2)) AS taken,
  EXISTS (SELECT 1 FROM pg_catalog.pg_locks o WHERE o.locktype = 'advisory' AND o.granted AND o.objsubid = 2 AND o.${THIS_DATABASE_SQL}
    AND o.classid = $1::bigint::oid AND o.objid = pg_catalog.hashtext($2)::oid AND o.pid <> pg_catalog.pg_backend_pid()
    AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_locks n WHERE n.pid = o.pid AND n.locktype = 'advisory' AND n.granted
      AND n.objsubid = 1 AND n.classid::bigint >> 16 = $3)) AS older`;

/**
 * The check before each cycle and push, in the same round trip: which backends hold the lock,
 * and whether the mirror's schema and catalog are still there. A schema dropped under the daemon
 * would otherwise fail every query of every cycle for ever.
 */
const CONFIRM_SQL = `SELECT ARRAY(${HOLDER_SQL}) AS pids,
  EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $2) AS schema,
  pg_catalog.to_regclass(pg_catalog.quote_ident($2) || '."_wsmirror_meta"') IS NOT NULL AS catalog`;

/**
 * This session only: it sits idle between cycles by design, so the server's idle_session_timeout
 * (PostgreSQL 14+; a no-op where the setting does not exist) must not end it, and the server
 * probes the client early enough to notice a peer gone without a word.
 */
const SESSION_SQL = `SELECT set_config(name, value, false) FROM pg_settings
  JOIN (VALUES ('idle_session_timeout', '0'), ('tcp_keepalives_idle', '60')) AS s(n, value) ON s.n = name`;

/** Takes the lock, or says which session holds it. `logger` hears of its losses. */
export async function takePostgresSyncLock(
  location: Extract<MirrorLocation, { dialect: 'postgres' }>, schema: string, logger?: MirrorLogger,
): Promise<SyncLock | SyncLockHeld> {
  const lock = new HeldLock(location.connectionString, schema, logger);
  try {
    if (await lock.take()) return lock;
  } catch (error) {
    await lock.release();
    throw connectFailure('cannot reach', `the Postgres mirror ${location.display}`, error);
  }
  await lock.release();
  return { heldBy: lock.refusedBy() };
}

class HeldLock implements SyncLock {
  readonly #connectionString: string;
  readonly #schema: string;
  readonly #key: string;
  readonly #logger: MirrorLogger | undefined;
  /** The connection holding the lock, and its backend's id; undefined while it is lost. */
  #client: pg.Client | undefined;
  #pid: number | undefined;
  /** Backend ids of this process's earlier lock connections (one of them may still hold it). */
  readonly #earlierPids = new Set<number>();
  /** Set once another session was found holding the lock: it is not this process's any more. */
  #takenByAnother = false;
  /** Which session that was, when it could be told. */
  #heldBy: string | undefined;
  /** What of the mirror the last check found dropped; undefined while it is there. */
  #dropped: 'schema' | 'catalog' | undefined;
  #retaking: Promise<void> | undefined;
  /** Why the last attempt to take the lock again failed. */
  #lastRetakeError = '';
  /** Queries on the lock connection, one at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  #released = false;
  readonly #keepAlive: NodeJS.Timeout;

  constructor(connectionString: string, schema: string, logger: MirrorLogger | undefined) {
    this.#connectionString = connectionString;
    this.#schema = schema;
    this.#key = lockKey(schema);
    this.#logger = logger;
    this.#keepAlive = setInterval(() => void this.#check().catch(() => {}), KEEP_ALIVE_MS);
    // The lock is held for the process's life; the timer alone must not keep it running.
    this.#keepAlive.unref();
  }

  /** Takes the lock on a new connection: true when taken, false when another session holds it. */
  async take(): Promise<boolean> {
    const client = new ClientEndedWhenConnectFails({
      ...connectionConfig(this.#connectionString, 'sync lock'),
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      query_timeout: QUERY_TIMEOUT_MS,
    });
    client.on('error', (error) => this.#lost(client, error.message));
    client.on('end', () => this.#lost(client, 'the connection was closed'));
    try {
      await client.connect();
      await client.query(`${SET_SEARCH_PATH_SQL}; ${SESSION_SQL}`);
      let { taken, pid } = await this.#tryLock(client);
      if (!taken && (await this.#heldByEarlierConnection(client))) ({ taken, pid } = await this.#tryLock(client));
      let olderHolds = false;
      if (taken && !(await this.#keepOlderVersionsOff(client))) {
        taken = false;
        olderHolds = true;
      }
      if (taken && !this.#released) {
        this.#client = client;
        this.#pid = pid;
        return true;
      }
      if (!taken) {
        this.#takenByAnother = true;
        this.#heldBy = await this.#holder(client, olderHolds);
      }
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    await client.end().catch(() => {});
    return false;
  }

  /** Which session held the lock when `take` found it taken; undefined when that could not be told. */
  refusedBy(): string | undefined {
    return this.#heldBy;
  }

  async confirm(): Promise<boolean> {
    await this.#retaking;
    if (this.#client !== undefined) {
      // A check that fails loses the connection, which starts taking the lock again.
      await this.#check();
      await this.#retaking;
    } else if (!this.#takenByAnother) {
      await (this.#retaking ??= this.#retake());
    }
    if (this.#takenByAnother) return false;
    if (this.#client === undefined) {
      throw new MirrorError(`cannot take the sync lock of the mirror (schema ${this.#schema}) again: ${this.#lastRetakeError}`);
    }
    if (this.#dropped !== undefined) {
      const what = this.#dropped === 'schema' ? `the mirror's schema ${this.#schema}` : `the catalog of the mirror (schema ${this.#schema}, its table _wsmirror_meta)`;
      throw new MirrorSchemaGoneError(`${what} was dropped while wsmirror had it open: wsmirror stops rather than fail every cycle; `
        + 'started again, it makes the mirror anew in that schema and reads every table in full (local edits still in the dropped outbox are gone with it)');
    }
    return true;
  }

  async release(): Promise<void> {
    this.#released = true;
    clearInterval(this.#keepAlive);
    await this.#retaking;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  /**
   * A query on the lock connection proving its session (and so the lock) alive, and the mirror's
   * schema there; a failure loses it.
   */
  async #check(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    const run = this.#queue.then(() => client.query<{ pids: number[]; schema: boolean; catalog: boolean }>(CONFIRM_SQL, [this.#key, this.#schema]));
    this.#queue = run.catch(() => {});
    try {
      const [row] = (await run).rows;
      this.#dropped = row?.schema === false ? 'schema' : row?.catalog === false ? 'catalog' : undefined;
      if (!(row?.pids ?? []).includes(this.#pid!)) this.#lost(client, 'its session no longer holds the lock');
    } catch (error) {
      this.#lost(client, (error as Error).message);
    }
  }

  #lost(client: pg.Client, reason: string): void {
    if (this.#released || client !== this.#client) return;
    this.#client = undefined;
    if (this.#pid !== undefined) this.#earlierPids.add(this.#pid);
    this.#pid = undefined;
    client.end().catch(() => {});
    this.#logger?.warn(
      { schema: this.#schema, reason },
      `the sync lock of the mirror (schema ${this.#schema}) was lost with its connection (${reason}); taking it again`,
    );
    this.#retaking ??= this.#retake();
  }

  async #retake(): Promise<void> {
    try {
      if (await this.take()) {
        this.#logger?.warn({ schema: this.#schema }, `took the sync lock of the mirror (schema ${this.#schema}) again, on a new connection`);
      } else if (!this.#released) {
        this.#logger?.warn({ schema: this.#schema }, `the sync lock of the mirror (schema ${this.#schema}) is now held by another process`);
      }
    } catch (error) {
      // The server may be restarting: the next confirm (before the next cycle) tries again.
      this.#lastRetakeError = (error as Error).message;
      this.#logger?.warn(
        { schema: this.#schema, reason: this.#lastRetakeError },
        `could not take the sync lock of the mirror (schema ${this.#schema}) again (${this.#lastRetakeError}); trying before the next cycle`,
      );
    } finally {
      this.#retaking = undefined;
    }
  }

  async #tryLock(client: pg.Client): Promise<{ taken: boolean; pid: number | undefined }> {
    const { rows } = await client.query<{ taken: boolean; pid: number }>(TRY_LOCK_SQL, [this.#key]);
    return { taken: rows[0]?.taken === true, pid: rows[0]?.pid };
  }

  /** The session holding this version's lock, or the older versions' (`older`); undefined when it cannot be told. */
  async #holder(client: pg.Client, older: boolean): Promise<string | undefined> {
    try {
      return await holderSession(client, this.#key, this.#schema, older) ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** False when an older wsmirror holds its lock of this schema (see OLDER_LOCK_SQL). */
  async #keepOlderVersionsOff(client: pg.Client): Promise<boolean> {
    const { rows } = await client.query<{ taken: boolean; older: boolean }>(OLDER_LOCK_SQL, [OLDER_LOCK_CLASS, this.#schema, Number(KEY_MARK)]);
    return rows[0]?.taken === true || rows[0]?.older !== true;
  }

  /**
   * The holder is one of this process's earlier lock connections, whose end the server has not
   * noticed yet (a network cut): it is ended, and true tells the caller to try again.
   */
  async #heldByEarlierConnection(client: pg.Client): Promise<boolean> {
    if (this.#earlierPids.size === 0) return false;
    const { rows } = await client.query<{ pid: number }>(HOLDER_SQL, [this.#key]);
    const pid = rows[0]?.pid;
    if (pid === undefined || !this.#earlierPids.has(pid)) return pid === undefined;
    await client.query('SELECT pg_catalog.pg_terminate_backend($1, 5000)', [pid]);
    return true;
  }
}

/** The other session holding the lock (this version's, or the older versions' with `older`), described; null when none does. */
async function holderSession(db: pg.Client | pg.Pool, key: string, schema: string, older: boolean): Promise<string | null> {
  const { rows } = await db.query<{ pid: number; application: string | null; user: string | null; client: string | null; since: string | null }>(
    HOLDER_DETAIL_SQL, [key, older, OLDER_LOCK_CLASS, schema],
  );
  const h = rows[0];
  if (h === undefined) return null;
  const about = [
    h.application ? `application ${JSON.stringify(h.application)}` : undefined,
    h.user ? `user ${JSON.stringify(h.user)}` : undefined,
    h.client ? `from ${h.client}` : undefined,
    h.since ? `connected since ${h.since}` : undefined,
  ].filter((s) => s !== undefined).join(', ');
  return `the session of pid ${h.pid}${about === '' ? '' : ` (${about})`}${older ? ', an older version of wsmirror' : ''}`;
}

/**
 * Whether a wsmirror process (a `run` or `sync`) holds the sync lock of the mirror in `schema`
 * now, and which session, without taking it (`wsmirror status`): pg_locks is readable by every
 * role. Null when none does.
 */
export async function postgresSyncLockHolder(pool: pg.Pool, schema: string): Promise<SyncLockHeld | null> {
  const session = await holderSession(pool, lockKey(schema), schema, false);
  return session === null ? null : { heldBy: session };
}
