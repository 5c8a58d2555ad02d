import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { SentCreate } from '../outbox.ts';
import { chunks, entryIdIn, jsonSql } from './outbox-rows.ts';

/** Marks creates as being sent, committed before the request goes out (crash between send and ack). */
export async function markSending(ctx: MirrorContext, creates: readonly SentCreate[], at: string): Promise<void> {
  assertOpen(ctx);
  if (creates.length === 0) return;
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    for (const chunk of chunks(creates.flatMap((c) => c.entryIds))) {
      await cat.updateTable('_wsmirror_outbox').set({ sending_since: at }).where(entryIdIn(ctx, chunk)).execute();
    }
    for (const create of creates) {
      await cat.updateTable('_wsmirror_outbox').set({ new_value: jsonSql(ctx, create.body) })
        .where('operation', '=', 'insert').where(entryIdIn(ctx, create.entryIds)).execute();
    }
  });
}
