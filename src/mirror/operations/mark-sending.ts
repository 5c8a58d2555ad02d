import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { SentCreate } from '../outbox.ts';
import { chunks, entryIdIn, jsonSql } from './outbox-rows.ts';

/**
 * Marks creates as being sent, committed before the request goes out (crash between send and
 * ack): one transaction, and on Postgres one round trip however many creates it marks.
 */
export async function markSending(ctx: MirrorContext, creates: readonly SentCreate[], at: string): Promise<void> {
  assertOpen(ctx);
  if (creates.length === 0) return;
  await ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    tx.atCommit([
      ...chunks(creates.flatMap((c) => c.entryIds)).map((chunk) =>
        cat.updateTable('_wsmirror_outbox').set({ sending_since: at }).where(entryIdIn(ctx, chunk)).compile()),
      ...creates.map((create) =>
        cat.updateTable('_wsmirror_outbox').set({ new_value: jsonSql(ctx, create.body) })
          .where('operation', '=', 'insert').where(entryIdIn(ctx, create.entryIds)).compile()),
    ]);
  });
}
