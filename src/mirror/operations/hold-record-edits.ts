import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';

/**
 * Pending updates and deletes of records the mirror holds from upstream (positive ids) → failed,
 * with `message`; returns how many. For a mirror that starts following another copy of its
 * workspace: those edits were made to records of the upstream it followed, and a record of the
 * same id in the other copy may be another record. They stay in the outbox, and the rows keep
 * their local values, until `wsmirror outbox retry` sends them or `discard` drops them. Edits
 * of rows inserted here (negative ids) stay pending: their records do not exist anywhere yet.
 */
export async function holdRecordEdits(ctx: MirrorContext, message: string): Promise<number> {
  assertOpen(ctx);
  return ctx.driver.write(async (tx) => {
    const cat = ctx.driver.catalog(tx.db);
    const held = await cat.updateTable('_wsmirror_outbox')
      .set({ status: 'failed', last_error: message, next_attempt_at: null, sending_since: null })
      .where('status', '=', 'pending').where('record_id', '>', 0).where('operation', 'in', ['update', 'delete'])
      .executeTakeFirst();
    return Number(held.numUpdatedRows);
  });
}
