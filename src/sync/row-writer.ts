import type { CursorWrites, EncodedRows, Mirror, RecordId } from '../mirror/mirror.ts';
import type { MirrorTable, TableState } from '../mirror/catalog.ts';
import { IdTally } from './id-tally.ts';
import { tableLabel, type SyncContext } from './sync-context.ts';

type Row = { id: RecordId; values: Readonly<Record<string, unknown>> };

export interface RowWriterTotals {
  upserted: number;
  deleted: number;
}

/**
 * The distinct rows one table pull wrote, shared by its steps (a backfill's scan and catch-up),
 * so every row counts once however often it was read: the counts reported and the
 * `rows_applied` metric are rows, not writes.
 */
export class PullTally {
  readonly upserted = new IdTally();
  /** Rows that were there and are gone: a row is deleted once. */
  deleted = 0;

  get totals(): RowWriterTotals {
    return { upserted: this.upserted.size, deleted: this.deleted };
  }
}

/** What the last write of a run carries besides rows (see RowBatch). */
export interface FinalWrite {
  cursors?: CursorWrites;
  state?: TableState;
  pulled?: { currentAsOf: string };
}

/**
 * Batches rows of one table into mirror transactions of about `batchRows` rows, or fewer once
 * their values take `writeBatchBytes` (a page of large records may fill one alone), with at most
 * one write in flight while the caller goes on fetching: writing overlaps fetching instead of
 * adding to it, and a pull holds two batches at most besides its pages, whatever the size of its
 * records. Each page is encoded for the mirror as it is added, so the page itself is garbage at
 * once and a batch waits as the mirror's compact form. The last write carries the cursors and
 * state that the whole run covers, so they commit only with the data they vouch for; each
 * earlier write carries the latest checkpoint given with its rows (a scan's position), so an
 * interrupted run resumes from the last one committed.
 */
export class RowWriter {
  readonly #ctx: SyncContext;
  readonly #mirror: Mirror;
  readonly #tableId: string;
  readonly #label: string;
  readonly #batchRows: number;
  readonly #batchBytes: number;
  #rows: EncodedRows | undefined;
  #deletes: RecordId[] = [];
  /** Ids of the rows in `#rows`, counted once written. */
  #ids: number[] = [];
  #inFlight: Promise<void> | undefined;
  #checkpoint: CursorWrites | undefined;
  /** The checkpoint of the last write started: what the mirror holds rows for. */
  #writtenCheckpoint: CursorWrites | undefined;
  /** The error of a write the mirror refused: every later write fails with it. */
  #failure: unknown;
  readonly #tally: PullTally;

  constructor(ctx: SyncContext, table: MirrorTable, tally: PullTally = new PullTally()) {
    this.#tally = tally;
    this.#ctx = ctx;
    this.#mirror = ctx.mirror;
    this.#tableId = table.tableId;
    this.#label = tableLabel(table);
    this.#batchRows = ctx.options.writeBatchRows ?? ctx.mirror.preferredBatchRows;
    this.#batchBytes = ctx.options.writeBatchBytes;
  }

  /** The distinct rows written so far (by every writer sharing the tally). */
  get totals(): RowWriterTotals {
    return this.#tally.totals;
  }

  /** Queues rows; `checkpoint`: cursors that hold once these rows (and all before) are written. */
  async add(upserts: readonly Row[], deletes: readonly RecordId[] = [], checkpoint?: CursorWrites): Promise<void> {
    // A batch applies its deletes before its upserts, so a deletion read after an upsert of the
    // same row (a change committed late) must not join that upsert's batch: the later read wins.
    if (deletes.length > 0 && this.#ids.length > 0) {
      const queued = new Set(this.#ids);
      if (deletes.some((id) => queued.has(Number(id)))) await this.#writeQueued();
    }
    if (upserts.length > 0) {
      try {
        this.#rows = await this.#mirror.encodeRows(this.#tableId, upserts, this.#rows);
      } catch (error) {
        // A page that fails to encode may leave part of itself in the queued batch: the batch is
        // dropped and the checkpoint goes back to the one last written with its rows, so a
        // resumed run reads those pages again instead of starting after rows never written.
        this.#rows = undefined;
        this.#ids = [];
        this.#deletes = [];
        this.#checkpoint = this.#writtenCheckpoint;
        throw error;
      }
      for (const row of upserts) this.#ids.push(Number(row.id));
    }
    // Only once the page is queued whole does the checkpoint that vouches for it hold.
    if (checkpoint) this.#checkpoint = checkpoint;
    for (const id of deletes) this.#deletes.push(id);
    if ((this.#rows?.count ?? 0) + this.#deletes.length >= this.#batchRows || (this.#rows?.bytes ?? 0) >= this.#batchBytes) {
      await this.#writeQueued();
    }
  }

  /** Starts writing what is queued, with the latest checkpoint, once the write in flight is done. */
  async #writeQueued(): Promise<void> {
    await this.#settle();
    const write = this.#write(this.#checkpoint ? { cursors: this.#checkpoint } : {});
    // Its error surfaces at the next settle; until then the caller may be waiting for a page, and
    // a rejection nobody handles yet would end the process.
    write.catch(() => undefined);
    this.#inFlight = write;
  }

  /** Writes what is left together with the final cursors and state, and waits for it. */
  async finish(final: FinalWrite): Promise<RowWriterTotals> {
    await this.#settle();
    await this.#write({ ...final, cursors: { ...this.#checkpoint, ...final.cursors } });
    return this.totals;
  }

  /**
   * Writes what is queued with the latest checkpoint (not the final cursors): a scan stopped by a
   * shutdown or a failure keeps every page it read, and resumes after the last one.
   */
  async flush(): Promise<void> {
    await this.#settle();
    if ((this.#rows?.count ?? 0) + this.#deletes.length > 0) await this.#write(this.#checkpoint ? { cursors: this.#checkpoint } : {});
  }

  /** Waits for the write in flight, surfacing its error. */
  async #settle(): Promise<void> {
    const pending = this.#inFlight;
    this.#inFlight = undefined;
    if (pending) await pending;
  }

  async #write(final: FinalWrite): Promise<void> {
    // After a refused write, nothing more is written: a later batch's checkpoint would cover the
    // refused rows too, and a resumed run would start after rows never written.
    if (this.#failure !== undefined) throw this.#failure;
    this.#writtenCheckpoint = this.#checkpoint;
    const rows = this.#rows;
    const ids = this.#ids;
    const deletes = this.#deletes;
    this.#rows = undefined;
    this.#ids = [];
    this.#deletes = [];
    let result: Awaited<ReturnType<Mirror['applyRows']>>;
    try {
      result = await this.#mirror.applyRows(this.#tableId, {
        ...(rows ? { encoded: rows } : {}),
        deletes,
        ...final,
      });
    } catch (error) {
      this.#failure = error;
      throw error;
    }
    const upserted = this.#tally.upserted.add(ids);
    this.#tally.deleted += result.deleted;
    const { observer } = this.#ctx;
    if (upserted > 0) observer.rowsApplied?.(this.#label, 'upsert', upserted);
    if (result.deleted > 0) observer.rowsApplied?.(this.#label, 'delete', result.deleted);
  }

  /** Drops a write in flight on error paths so its rejection is not left unhandled. */
  async abandon(): Promise<void> {
    await this.#settle().catch(() => undefined);
  }
}
