import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { chunks, entryIdIn, IDS_PER_SET } from './outbox-rows.ts';

/** Marks entries as being sent, committed before the request goes out (crash between send and ack). */
export async function markSending(ctx: MirrorContext, entryIds: readonly number[], at: string): Promise<void> {
  assertOpen(ctx);
  if (entryIds.length === 0) return;
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    for (const chunk of chunks(entryIds, IDS_PER_SET)) {
      await cat.updateTable('_wsmirror_outbox').set({ sending_since: at }).where(entryIdIn(ctx, chunk)).execute();
    }
  });
}
