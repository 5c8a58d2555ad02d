import type Database from 'better-sqlite3';
import { quoteIdent } from '../sql-text.ts';
import { WritableSchema } from './writable-schema.ts';

/**
 * Many CREATE TRIGGER and DROP TRIGGER statements at once. SQLite's CREATE TRIGGER loads its new
 * trigger by reading the whole schema table (`sqlite_schema`, which has no index) for its row:
 * the capture of a first sync of N tables of 40 fields (44 triggers each) read it 44·N times
 * while it grew by those rows, so the time grew with N² (500 tables: 82 s; bench/README.md,
 * "memory"). DROP TRIGGER finds its row to delete the same way (100 tables' capture dropped from
 * 500: 20 s). Here the rows are written as SQLite writes them (`CREATE TRIGGER ` and the rest of
 * the text as given), those dropped go in one DELETE, and the schema is loaded once at the end,
 * which parses and checks every trigger as the statements would have. A batch SQLite does not
 * load (a syntax error, a name taken, a table missing) is undone to its savepoint and its error
 * thrown; operations/capture.ts then makes table by table, whose few statements run one by one
 * and fail with SQLite's own error. A TEMP trigger of the same name, which DROP TRIGGER would
 * find first, cannot exist: the daemon's connection makes none.
 */

/** Fewer statements run one by one: loading the whole schema costs about what a few hundred scans of it do. */
export const TRIGGER_BATCH_MIN = 256;

/**
 * `CREATE TRIGGER "name" BEFORE|AFTER INSERT|DELETE|UPDATE [OF "column"] ON "table"`: the
 * statements capture-triggers.ts writes. Any other text is run as a statement.
 */
const HEADER = /^CREATE TRIGGER "((?:[^"]|"")+)" (?:BEFORE|AFTER) (?:INSERT|DELETE|UPDATE(?: OF "(?:[^"]|"")+")?) ON "((?:[^"]|"")+)"\s/;

/** `DROP TRIGGER IF EXISTS "name"`, as capture-triggers.ts writes it. */
const DROP = /^DROP TRIGGER IF EXISTS "((?:[^"]|"")+)"$/;

/** The trigger a DROP TRIGGER IF EXISTS of the shape above drops. */
export function droppedTriggerOf(text: string): string | undefined {
  const match = DROP.exec(text);
  return match ? match[1]!.replace(/""/g, '"') : undefined;
}

/** The trigger's name and table, when `text` is a CREATE TRIGGER of the shape above. */
export function triggerOf(text: string): { name: string; table: string } | undefined {
  const match = HEADER.exec(text);
  return match ? { name: match[1]!.replace(/""/g, '"'), table: match[2]!.replace(/""/g, '"') } : undefined;
}

const SAVEPOINT = quoteIdent('_wsmirror_trigger_batch');

/**
 * Triggers made and dropped one statement at a time (each a text `triggerOf` or
 * `droppedTriggerOf` reads), in effect at `finish`. Inside a write transaction.
 */
export class TriggerBatch {
  readonly #raw: Database.Database;
  readonly #schema: WritableSchema;
  readonly #insert: Database.Statement;
  #dropped: string[] = [];

  constructor(raw: Database.Database) {
    this.#raw = raw;
    raw.exec(`SAVEPOINT ${SAVEPOINT}`);
    this.#schema = new WritableSchema(raw);
    this.#insert = raw.prepare(`INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) VALUES ('trigger', ?, ?, 0, ?)`);
  }

  /** Runs one statement of the batch's kinds; false for any other statement. */
  add(text: string): boolean {
    const dropped = droppedTriggerOf(text);
    if (dropped !== undefined) {
      this.#dropped.push(dropped);
      return true;
    }
    const made = triggerOf(text);
    if (made === undefined) return false;
    // A trigger dropped before it is made again goes first.
    this.#deleteDropped();
    this.#insert.run(made.name, made.table, text);
    return true;
  }

  /** The rows of the triggers dropped so far, in one scan of sqlite_schema. */
  #deleteDropped(): void {
    if (this.#dropped.length === 0) return;
    this.#raw.prepare(`DELETE FROM sqlite_schema WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?))`).run(JSON.stringify(this.#dropped));
    this.#dropped = [];
  }

  /** Loads the schema with the batch's changes; if SQLite refuses them, undoes the batch and throws SQLite's reason. */
  finish(): void {
    try {
      try {
        this.#deleteDropped();
      } catch (error) {
        this.#schema.close(false);
        throw error;
      }
      this.#schema.close(true);
      // The schema is loaded again, and checked, at this connection's next statement.
      this.#raw.exec('SELECT 1 FROM sqlite_schema LIMIT 1');
    } catch (error) {
      this.#undo();
      throw error;
    }
    this.#raw.exec(`RELEASE SAVEPOINT ${SAVEPOINT}`);
  }

  /** Undoes the rows added (after a failure of what produced them). */
  abandon(): void {
    this.#schema.close(false);
    this.#undo();
  }

  #undo(): void {
    this.#raw.exec(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
    this.#raw.exec(`RELEASE SAVEPOINT ${SAVEPOINT}`);
  }
}

/**
 * Runs `statements` in order through `run`, but for a run of TRIGGER_BATCH_MIN or more CREATE or
 * DROP TRIGGER statements, which a TriggerBatch makes at once (`beforeBatch` first: it checks a
 * write transaction is open). A statement of another kind ends the batch before it runs.
 */
export async function runBatchingTriggers(
  raw: Database.Database, statements: Iterable<string>, run: (text: string) => Promise<void>, beforeBatch: () => void,
): Promise<void> {
  let waiting: string[] = [];
  let batch: TriggerBatch | undefined;
  const runWaiting = async () => {
    for (const text of waiting) await run(text);
    waiting = [];
  };
  try {
    for (const text of statements) {
      if (batch?.add(text)) continue;
      if (batch === undefined && (triggerOf(text) !== undefined || droppedTriggerOf(text) !== undefined)) {
        waiting.push(text);
        if (waiting.length >= TRIGGER_BATCH_MIN) {
          beforeBatch();
          batch = new TriggerBatch(raw);
          for (const early of waiting) batch.add(early);
          waiting = [];
        }
        continue;
      }
      batch?.finish();
      batch = undefined;
      await runWaiting();
      await run(text);
    }
    batch?.finish();
    batch = undefined;
    await runWaiting();
  } catch (error) {
    batch?.abandon();
    throw error;
  }
}
