import type { CursorWrites, EncodedRows, Mirror, RecordId } from '../mirror/mirror.ts';
import type { MirrorTable, TableState } from '../mirror/catalog.ts';
import { tableLabel, type SyncContext } from './sync-context.ts';

type Row = { id: RecordId; values: Readonly<Record<string, unknown>> };

export interface RowWriterTotals {
  upserted: number;
  deleted: number;
}

/**
 * Batches rows of one table into mirror transactions of about `batchRows` rows, with at most one
 * write in flight while the caller goes on fetching: writing overlaps fetching instead of adding
 * to it. Each page is encoded for the mirror as it is added, so the page itself is garbage at
 * once and a batch waits as the mirror's compact form. The last write carries the cursors and
 * state that the whole run covers, so they commit only with the data they vouch for.
 */
export class RowWriter {
  readonly #ctx: SyncContext;
  readonly #mirror: Mirror;
  readonly #tableId: string;
  readonly #label: string;
  readonly #batchRows: number;
  #rows: EncodedRows | undefined;
  #deletes: RecordId[] = [];
  #inFlight: Promise<void> | undefined;
  readonly totals: RowWriterTotals = { upserted: 0, deleted: 0 };

  constructor(ctx: SyncContext, table: MirrorTable) {
    this.#ctx = ctx;
    this.#mirror = ctx.mirror;
    this.#tableId = table.tableId;
    this.#label = tableLabel(table);
    this.#batchRows = ctx.options.writeBatchRows ?? ctx.mirror.preferredBatchRows;
  }

  async add(upserts: readonly Row[], deletes: readonly RecordId[] = []): Promise<void> {
    if (upserts.length > 0) this.#rows = await this.#mirror.encodeRows(this.#tableId, upserts, this.#rows);
    for (const id of deletes) this.#deletes.push(id);
    if ((this.#rows?.count ?? 0) + this.#deletes.length >= this.#batchRows) {
      await this.#settle();
      this.#inFlight = this.#write({});
    }
  }

  /** Writes what is left together with the final cursors and state, and waits for it. */
  async finish(final: { cursors?: CursorWrites; state?: TableState }): Promise<RowWriterTotals> {
    await this.#settle();
    await this.#write(final);
    return this.totals;
  }

  /** Waits for the write in flight, surfacing its error. */
  async #settle(): Promise<void> {
    const pending = this.#inFlight;
    this.#inFlight = undefined;
    if (pending) await pending;
  }

  async #write(final: { cursors?: CursorWrites; state?: TableState }): Promise<void> {
    const rows = this.#rows;
    const deletes = this.#deletes;
    this.#rows = undefined;
    this.#deletes = [];
    const result = await this.#mirror.applyRows(this.#tableId, {
      ...(rows ? { encoded: rows } : {}),
      deletes,
      ...(final.cursors ? { cursors: final.cursors } : {}),
      ...(final.state ? { state: final.state } : {}),
    });
    this.totals.upserted += result.upserted;
    this.totals.deleted += result.deleted;
    const { observer } = this.#ctx;
    if (result.upserted > 0) observer.rowsApplied?.(this.#label, 'upsert', result.upserted);
    if (result.deleted > 0) observer.rowsApplied?.(this.#label, 'delete', result.deleted);
  }

  /** Drops a write in flight on error paths so its rejection is not left unhandled. */
  async abandon(): Promise<void> {
    await this.#settle().catch(() => undefined);
  }
}
