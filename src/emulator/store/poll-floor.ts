import type { Db } from './db.ts';

const LAST_AS_OF = 'last_as_of';

/** The times the clock discipline must never go back before (see ChangeLog). */
export interface PollFloor {
  /** The latest `asOf` handed out; later changes are stamped after it. */
  asOf: number;
  /** The latest change stamp logged; a new poll's `asOf` is never before it. */
  stamp: number;
}

/**
 * What the clock discipline keeps in the store, so that a `--data` restart, whose clock runs on
 * real time again, never stamps a change before an `asOf` a client already holds, nor opens a poll
 * before a change already logged. The latest stamp needs no row of its own: it is in the logs.
 * The admin reset empties `meta` and the logs, and so forgets both.
 */
export class StoredPollFloor {
  readonly #readAsOf;
  readonly #writeAsOf;
  readonly #maxStamp;

  constructor(db: Db) {
    this.#readAsOf = db.prepare(`SELECT value FROM meta WHERE key = '${LAST_AS_OF}'`);
    this.#writeAsOf = db.prepare(
      `INSERT INTO meta (key, value) VALUES ('${LAST_AS_OF}', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    );
    // Per table through its (table_id, changed_at) index: no scan of the whole record log.
    this.#maxStamp = db.prepare(
      `SELECT max(at) AS at FROM (
         SELECT max(changed_at) AS at FROM schema_changes
         UNION ALL
         SELECT (SELECT max(changed_at) FROM record_changes WHERE table_id = tables.id) FROM tables
       )`,
    );
  }

  load(): PollFloor {
    const asOf = this.#readAsOf.get() as { value: string } | undefined;
    const stamp = (this.#maxStamp.get() as { at: number | null }).at;
    return {
      asOf: asOf === undefined ? Number.NEGATIVE_INFINITY : Number(asOf.value),
      stamp: stamp ?? Number.NEGATIVE_INFINITY,
    };
  }

  saveAsOf(asOf: number): void {
    this.#writeAsOf.run(String(asOf));
  }
}
