import type { WriteTx } from '../dialect-driver.ts';
import { MirrorError, TableSchemaError } from '../errors.ts';
import type { MirrorContext } from '../mirror-context.ts';

/**
 * Before a schema change's DDL: where the daemon's role may alter its tables but not create beside
 * them (Postgres: a schema owned by another role, CREATE on it revoked), a change that makes
 * objects (a new table; the readable view and capture functions of a table it changes, or of a
 * table referencing it, derived-objects.ts) would fail at the first CREATE, after every table's
 * DDL, and take the whole plan with it. Asked first, the refusal falls on the first table (in
 * `touched`, the plan's order) whose change needs it, as a TableSchemaError naming the grant: the
 * schema pull holds that table back and applies the others. A drop of a table no other table
 * references makes nothing, and goes through.
 */
export async function refuseChangesThatCreate(
  ctx: MirrorContext, tx: WriteTx, touched: ReadonlySet<string>, dropped: ReadonlySet<string>,
): Promise<void> {
  const missing = await ctx.driver.missingCreatePrivilege(tx);
  if (missing === undefined) return;
  const references = await ctx.driver.catalog(tx.db).selectFrom('_wsmirror_fields').select(['table_id', 'ref_table_id'])
    .where('ref_table_id', 'is not', null).execute();
  for (const tableId of touched) {
    const remade = !dropped.has(tableId) || references.some((r) => r.ref_table_id === tableId && !dropped.has(r.table_id));
    if (remade) throw new TableSchemaError(tableId, new MirrorError(missing));
  }
}
