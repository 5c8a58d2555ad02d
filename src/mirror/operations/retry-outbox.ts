import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { OutboxFilter } from '../outbox.ts';
import { chunks, entryIdIn, selectEntryIds } from './outbox-rows.ts';

/**
 * failed/conflict → pending, due at once (attempts kept), marked retried: the push sends their
 * value without a conflict check (the local value wins). Returns how many entries changed.
 */
export async function retryOutbox(ctx: MirrorContext, filter: Omit<OutboxFilter, 'statuses'>): Promise<number> {
  assertOpen(ctx);
  return ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    const ids = await selectEntryIds(cat, { ...filter, statuses: ['failed', 'conflict'] });
    for (const chunk of chunks(ids)) {
      await cat.updateTable('_wsmirror_outbox').set({ status: 'pending', next_attempt_at: null, sending_since: null, retried_at: new Date().toISOString() })
        .where(entryIdIn(ctx, chunk)).execute();
    }
    return ids.length;
  });
}
