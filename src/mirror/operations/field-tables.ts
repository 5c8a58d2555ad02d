import { sql } from 'kysely';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';

/**
 * Fills `_wsmirror_fields.sql_table` (the SQL table of each field) and `ref_sql_table` (the SQL
 * table of the table a reference points at, NULL when that one is not mirrored) from
 * `_wsmirror_tables`. Run after every schema change: a table renamed, created or dropped changes
 * them for fields of other tables too. One statement over the catalog, cheap at any size.
 */
export async function refreshFieldTables(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  const tables = ctx.driver.table('_wsmirror_tables');
  const fields = ctx.driver.table('_wsmirror_fields');
  await cat.updateTable('_wsmirror_fields').set({
    sql_table: sql<string>`(SELECT "t"."sql_name" FROM ${tables} AS "t" WHERE "t"."table_id" = ${fields}."table_id")`,
    ref_sql_table: sql<string>`(SELECT "t"."sql_name" FROM ${tables} AS "t" WHERE "t"."table_id" = ${fields}."ref_table_id")`,
  }).execute();
}
