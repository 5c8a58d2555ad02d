import { scanCursorKey } from '../mirror/catalog.ts';
import { SafetyValveError } from '../errors.ts';
import { estimateOrNull, logRefusedPage } from './refused-pages.ts';
import { PullTally, RowWriter, type FinalWrite, type RowWriterTotals } from './row-writer.ts';
import { RecordKeyCheck } from './schema-drift.ts';
import { decodeCheckpoint, encodeCheckpoint, type ScanCheckpoint } from './scan-checkpoint.ts';
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
 *
 * Every batch of rows commits with a checkpoint (scan-checkpoint.ts). A scan that finds one
 * taken under the same columns goes on after its last record: the mirror's ids below it that
 * the interrupted run did not write (`_synced_at` before the scan began) are the candidates it
 * had found there, looked up again.
 */
export async function scanTable(
  ctx: SyncContext,
  table: PulledTable,
  /** What the last write carries besides the rows, given when the scan (or the one it resumes) began. */
  final: (startedAt: string) => FinalWrite,
  tally: PullTally = new PullTally(),
): Promise<RowWriterTotals & { rowsRead: number; startedAt: string }> {
  const { client, mirror, options, observer, logger } = ctx;
  const label = tableLabel(table);
  const key = scanCursorKey(table.tableId);
  const stored = decodeCheckpoint(await mirror.getCursor(key));
  const resumed = stored?.shape === table.shape ? stored : undefined;
  const checkpoint: ScanCheckpoint = resumed ?? {
    startedAt: new Date().toISOString(),
    shape: table.shape,
    position: null,
    rowsRead: 0,
    // A backfill's progress is worth a few small requests; a periodic scan's is not, nor that of a
    // table read whole by the first page.
    estimatedRows: table.state === 'needs_backfill'
      ? await estimateOrNull(client.estimateRecordCountPastOnePage(table.moduleName, table.tableName, ctx.signal ? { signal: ctx.signal } : {}))
      : null,
  };
  if (resumed?.position) {
    logger.info({ table: label, rowsRead: resumed.rowsRead, estimatedRows: resumed.estimatedRows, startedAt: resumed.startedAt },
      'resuming the scan after its last committed page');
  }
  const rowsBefore = await mirror.countRows(table.tableId);
  // A backfill estimates its table's records; a rescan of a table held whole expects its rows.
  const expected = checkpoint.estimatedRows ?? (table.state === 'ready' && rowsBefore > 0 ? rowsBefore : null);
  observer.scanStarted?.(label, { rowsRead: checkpoint.rowsRead, estimatedRows: expected });
  const deleteCap = Math.max(options.deleteShareFloor, Math.floor(rowsBefore * options.maxDeleteShare));
  const writer = new RowWriter(ctx, table, tally);
  const keys = new RecordKeyCheck(ctx, table);
  const onRefusedPage = logRefusedPage(logger, label);
  const resumeAfter = checkpoint.position?.lastId;
  const local = (resumeAfter === undefined
    ? mirror.streamIds(table.tableId)
    : concat(
      mirror.streamIds(table.tableId, { before: resumeAfter, syncedBefore: checkpoint.startedAt }),
      mirror.streamIds(table.tableId, { after: resumeAfter }),
    ))[Symbol.asyncIterator]();
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
    const found = await client.getRecordsByIds(table.moduleName, table.tableName, chunk, { expectFields: table.fieldNames, onRefusedPage });
    await keys.check(found);
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

  let rowsRead = checkpoint.rowsRead;
  try {
    const pages = client.iterateRecords(table.moduleName, table.tableName, {
      pageSize: options.pageSize,
      concurrency: options.backfillConcurrency,
      expectFields: table.fieldNames,
      onRefusedPage,
      ...(checkpoint.position ? { from: checkpoint.position } : {}),
    });
    for await (const page of pages) {
      await keys.check(page);
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
      await writer.add(page, [], { [key]: encodeCheckpoint({ ...checkpoint, position: page.position, rowsRead }) });
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
    const last = final(checkpoint.startedAt);
    const totals = await writer.finish({ ...last, cursors: { ...last.cursors, [key]: null } });
    return { ...totals, rowsRead, startedAt: checkpoint.startedAt };
  } catch (error) {
    // What was read is good whatever stopped the scan (a shutdown, a failing request): keep it.
    await writer.flush().catch(() => undefined);
    await writer.abandon();
    await local.return?.();
    throw error;
  } finally {
    observer.scanFinished?.(label);
  }
}

async function* concat<T>(...streams: AsyncIterable<T>[]): AsyncIterable<T> {
  for (const stream of streams) yield* stream;
}
