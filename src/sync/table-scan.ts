import type { TableState } from '../mirror/catalog.ts';
import type { CursorWrites } from '../mirror/mirror.ts';
import { SafetyValveError } from '../errors.ts';
import { RowWriter, type RowWriterTotals } from './row-writer.ts';
import { tableLabel, type PulledTable, type SyncContext } from './sync-context.ts';

/** Candidates are confirmed by look-up in chunks of this many ids (the list `limit` bound). */
const CONFIRM_CHUNK = 100;

/**
 * Reads a whole table and makes the mirror equal to it (DESIGN §4.4 backfill, §4.5 full scan).
 *
 * Upstream pages arrive sorted by id, each record once; the mirror's ids are streamed in the
 * same order and merged against them, so ids the mirror has and upstream did not list are found
 * in bounded memory. Such an id is only a candidate, never deleted on the word of a paged read
 * alone: a direct look-up decides. Found rows are upserted, missing ones deleted — unless
 * that would delete more than the configured share of the table, in which case nothing is
 * deleted and the scan fails with SafetyValveError.
 *
 * The mirror stream is always read past the highest id of a page before that page is written,
 * so it only ever yields ids that were in the mirror before the scan.
 */
export async function scanTable(
  ctx: SyncContext,
  table: PulledTable,
  final: { cursors?: CursorWrites; state?: TableState },
): Promise<RowWriterTotals & { rowsRead: number }> {
  const { client, mirror, options, observer } = ctx;
  const label = tableLabel(table);
  const rowsBefore = await mirror.countRows(table.tableId);
  const deleteCap = Math.max(options.deleteShareFloor, Math.floor(rowsBefore * options.maxDeleteShare));
  const writer = new RowWriter(ctx, table);
  const local = mirror.streamIds(table.tableId)[Symbol.asyncIterator]();
  let head = (await local.next()).value as number | undefined;
  const advance = async () => {
    const next = await local.next();
    head = next.done ? undefined : next.value;
  };

  let candidates: number[] = [];
  const confirmedDeletes: number[] = [];
  const confirm = async () => {
    if (candidates.length === 0) return;
    const chunk = candidates;
    candidates = [];
    const found = await client.getRecordsByIds(table.moduleName, table.tableName, chunk, { expectFields: table.fieldNames });
    const present = new Set(found.map((r) => Number(r.id)));
    for (const id of chunk) if (!present.has(id)) confirmedDeletes.push(id);
    if (confirmedDeletes.length > deleteCap) {
      throw new SafetyValveError(
        `${label}: the scan would delete more than ${confirmedDeletes.length} of ${rowsBefore} rows ` +
          `(the limit is ${deleteCap}: sync.maxDeleteShare ${options.maxDeleteShare}); nothing was deleted`,
      );
    }
    await writer.add(found);
  };

  let rowsRead = 0;
  try {
    const pages = client.iterateRecords(table.moduleName, table.tableName, {
      pageSize: options.pageSize,
      concurrency: options.backfillConcurrency,
      expectFields: table.fieldNames,
    });
    for await (const page of pages) {
      for (const record of page) {
        const id = Number(record.id);
        while (head !== undefined && head < id) {
          candidates.push(head);
          await advance();
        }
        if (head === id) await advance();
      }
      ctx.signal?.throwIfAborted();
      rowsRead += page.length;
      observer.scanProgress?.(label, page.length);
      await writer.add(page);
      if (candidates.length >= CONFIRM_CHUNK) await confirm();
    }
    // Whatever the mirror holds past the last upstream id is a candidate too.
    while (head !== undefined) {
      candidates.push(head);
      await advance();
      if (candidates.length >= CONFIRM_CHUNK) await confirm();
    }
    await confirm();
    await writer.add([], confirmedDeletes);
    const totals = await writer.finish(final);
    return { ...totals, rowsRead };
  } catch (error) {
    await writer.abandon();
    await local.return?.();
    throw error;
  } finally {
    observer.scanFinished?.(label);
  }
}
