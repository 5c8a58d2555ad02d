import { Kysely, PostgresDialect } from 'kysely';
import type { CompiledQuery, PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { CatalogDb } from '../catalog-tables.ts';
import type { WriteTx } from '../dialect-driver.ts';
import { sessionEndedError } from './connect-failure.ts';
import { foreignTriggerGuardSql } from './foreign-triggers.ts';
import { inlineParameters } from './inline-parameters.ts';
import { ROW_LOCK_TIMEOUT_SQL, rowLockTimeoutError } from './row-locks.ts';
import { withServerDetail } from './server-detail.ts';
import { WRITER_SETTING } from './writer-marker.ts';

interface PgWriteTx extends WriteTx {
  readonly client: pg.PoolClient;
}

/**
 * BEGIN, and the transaction-local marker the outbox triggers check to skip the daemon's own
 * writes; with it the bound on lock waits (row-locks.ts).
 */
const MARKER_SQL = `SELECT set_config('${WRITER_SETTING}', 'daemon', true), ${ROW_LOCK_TIMEOUT_SQL}`;

/**
 * The daemon's write transactions on a Postgres mirror: each holds one pooled client, with a
 * Kysely bound to it for catalog queries and the raw client for COPY (the faster bulk path, see
 * bench/mirror-upsert.ts).
 */
export class WriteTransactions {
  readonly #pool: pg.Pool;
  /** Kysely on the pool: names the sessions holding the locks a write waited for. */
  readonly #db: Kysely<CatalogDb>;
  readonly #schema: string;
  readonly #triggerGuard: string;
  readonly #stagesByClient = new WeakMap<pg.PoolClient, Set<string>>();
  /** One Kysely per pooled client, for queries inside that client's transaction. */
  readonly #bound = new WeakMap<pg.PoolClient, Kysely<CatalogDb>>();
  /** Per client in a write: opens its transaction before the first statement (see `write`). */
  readonly #opening = new WeakMap<pg.PoolClient, () => Promise<void>>();

  constructor(pool: pg.Pool, db: Kysely<CatalogDb>, schema: string) {
    this.#pool = pool;
    this.#db = db;
    this.#schema = schema;
    this.#triggerGuard = foreignTriggerGuardSql(schema);
  }

  #kyselyFor(client: pg.PoolClient): Kysely<CatalogDb> {
    let db = this.#bound.get(client);
    if (!db) {
      // A pool of one that always hands out this client and never releases it; its queries open
      // the client's write transaction first.
      const query = async (text: string, values?: unknown[]) => {
        await this.#opening.get(client)?.();
        return client.query(text, values);
      };
      const lease = { query, release: () => {} } as unknown as PostgresPoolClient;
      const single: PostgresPool = { connect: async () => lease, end: async () => {}, options: {} };
      db = new Kysely<CatalogDb>({ dialect: new PostgresDialect({ pool: single }) });
      this.#bound.set(client, db);
    }
    return db;
  }

  /**
   * The transaction opens (BEGIN and the marker, one round trip) before the first statement that
   * goes through `tx`. Its statements for the commit then go with COMMIT, in one simple query
   * (after an error in it the rest, COMMIT too, is skipped, and the ROLLBACK below ends it). A
   * write made only of those (a table's idle pull, the cycle's record, a push's settling) never
   * opens one: a simple query of several statements is a transaction of its own, one round trip.
   */
  async write<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    let opened: Promise<unknown> | undefined;
    this.#opening.set(client, async () => {
      await (opened ??= client.query(`BEGIN; ${MARKER_SQL}`));
    });
    try {
      const last: CompiledQuery[] = [];
      const tx: PgWriteTx = { db: this.#kyselyFor(client), client, atCommit: (queries) => last.push(...queries) };
      const result = await fn(tx);
      const atCommit = last.map((q) => inlineParameters(q.sql, q.parameters));
      // What a foreign trigger did as the daemon's role is undone with the rest (foreign-triggers.ts).
      if (opened !== undefined) await client.query([...atCommit, this.#triggerGuard, 'COMMIT'].join(';\n'));
      else if (atCommit.length > 0) await client.query([MARKER_SQL, ...atCommit, this.#triggerGuard].join(';\n'));
      return result;
    } catch (error) {
      if (opened !== undefined) {
        // A rollback also undoes temp tables this transaction created.
        this.#stagesByClient.delete(client);
        await client.query('ROLLBACK').catch((e: unknown) => {
          broken = e as Error;
        });
      }
      const failure = sessionEndedError(withServerDetail(error));
      // A client whose session ended goes back to be discarded.
      if (failure !== error) broken ??= failure as Error;
      throw await rowLockTimeoutError(failure, this.#db, this.#schema, serverPid(client));
    } finally {
      this.#opening.delete(client);
      client.release(broken);
    }
  }

  /**
   * What a COPY inside `tx` goes through: its client, the transaction open (COPY goes through the
   * client itself, not `tx.db`), and the stages (temp tables) made on that client so far.
   */
  async forCopy(tx: WriteTx): Promise<{ client: pg.PoolClient; db: Kysely<CatalogDb>; stages: Set<string> }> {
    const { client, db } = tx as PgWriteTx;
    await this.#opening.get(client)?.();
    let stages = this.#stagesByClient.get(client);
    if (!stages) this.#stagesByClient.set(client, (stages = new Set()));
    return { client, db, stages };
  }
}

/** The server's pid of the session of `tx`. */
export function sessionPid(tx: WriteTx): number {
  return serverPid((tx as PgWriteTx).client);
}

/** The server's pid of a client's session, which pg keeps from the start-up (untyped). */
function serverPid(client: pg.PoolClient): number {
  return (client as unknown as { processID: number }).processID;
}
