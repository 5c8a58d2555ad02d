import { recordCursorKey } from '../mirror/catalog.ts';
import { nextSince } from './poll-window.ts';
import { PullTally, RowWriter, type RowWriterTotals } from './row-writer.ts';
import type { PulledTable, SyncContext } from './sync-context.ts';

/**
 * Incremental pull of a table with history (DESIGN §4.4): the changed ids come from
 * `records/changes`, their values are read back through the list endpoint filtered by id, and
 * an id that is no longer there is deleted locally. The new cursor commits with the last rows.
 */
export async function pullHistory(
  ctx: SyncContext, table: PulledTable, since: string, tally: PullTally = new PullTally(),
): Promise<RowWriterTotals> {
  const { client, options } = ctx;
  const writer = new RowWriter(ctx, table, tally);
  try {
    const poll = client.pollRecordChanges(table.moduleName, table.tableName, { since, pageSize: options.pageSize });
    for await (const changes of poll) {
      ctx.signal?.throwIfAborted();
      if (changes.length === 0) continue;
      const ids = [...new Set(changes.map((c) => Number(c.id)))];
      const found = await client.getRecordsByIds(table.moduleName, table.tableName, ids, { expectFields: table.fieldNames });
      const present = new Set(found.map((r) => Number(r.id)));
      await writer.add(found, ids.filter((id) => !present.has(id)));
    }
    return await writer.finish({
      cursors: { [recordCursorKey(table.tableId)]: nextSince(poll.asOf!, options.lookbackMs) },
    });
  } catch (error) {
    await writer.abandon();
    throw error;
  }
}
