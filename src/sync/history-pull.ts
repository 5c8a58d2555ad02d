import { recordCursorKey } from '../mirror/catalog.ts';
import { changeKey, type SeenChanges } from './backfill-window.ts';
import { nextSince } from './poll-window.ts';
import { logRefusedPage } from './refused-pages.ts';
import { PullTally, RowWriter, type RowWriterTotals } from './row-writer.ts';
import { RecordKeyCheck } from './schema-drift.ts';
import { tableLabel, type PulledTable, type SyncContext } from './sync-context.ts';

/**
 * Incremental pull of a table with history (DESIGN §4.4): the changed ids come from
 * `records/changes`, their values are read back through the list endpoint filtered by id, and
 * an id that is no longer there is deleted locally. The new cursor commits with the last rows,
 * and so does the table's pull (`pulled`: the upstream state the table then holds).
 * Changes in `alreadyRead` (a backfill's, see backfill-window.ts) are not read again.
 */
export async function pullHistory(
  ctx: SyncContext, table: PulledTable, since: string, pulled: { currentAsOf: string },
  alreadyRead?: SeenChanges, tally: PullTally = new PullTally(),
): Promise<RowWriterTotals> {
  const { client, options } = ctx;
  const writer = new RowWriter(ctx, table, tally);
  const keys = new RecordKeyCheck(ctx, table);
  const onRefusedPage = logRefusedPage(ctx.logger, tableLabel(table));
  try {
    const poll = client.pollRecordChanges(table.moduleName, table.tableName, { since, pageSize: options.pageSize });
    for await (const changes of poll) {
      ctx.signal?.throwIfAborted();
      const unread = alreadyRead ? changes.filter((c) => !alreadyRead.has(changeKey(c))) : changes;
      if (unread.length === 0) continue;
      const ids = [...new Set(unread.map((c) => Number(c.id)))];
      const found = await client.getRecordsByIds(table.moduleName, table.tableName, ids, { expectFields: table.fieldNames, onRefusedPage });
      await keys.check(found);
      const present = new Set(found.map((r) => Number(r.id)));
      await writer.add(found, ids.filter((id) => !present.has(id)));
    }
    return await writer.finish({
      cursors: { [recordCursorKey(table.tableId)]: nextSince(poll.asOf!, options.lookbackMs) },
      pulled,
    });
  } catch (error) {
    await writer.abandon();
    throw error;
  }
}
