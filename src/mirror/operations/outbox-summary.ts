import type { OutboxStatus } from '../catalog-tables.ts';
import type { OutboxCount } from '../mirror.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';

/** Outbox entries counted per table (and the SQL name its entries keep) and status, ordered by table id then status. */
export async function outboxSummary(ctx: MirrorContext): Promise<OutboxCount[]> {
  assertOpen(ctx);
  const rows = await ctx.driver.catalog(ctx.driver.db).selectFrom('_wsmirror_outbox')
    .select((eb) => ['table_id', 'sql_table', 'status', eb.fn.countAll().as('n')])
    .groupBy(['table_id', 'sql_table', 'status'])
    .orderBy('table_id').orderBy('sql_table').orderBy('status')
    .execute();
  // count(*) is a bigint on Postgres: a string or number depending on the driver's parser.
  return rows.map((r) => ({ tableId: r.table_id, sqlTable: r.sql_table, status: r.status as OutboxStatus, count: Number(r.n) }));
}
