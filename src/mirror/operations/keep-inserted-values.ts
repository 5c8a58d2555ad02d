import { sql } from 'kysely';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import { jsonSql } from './outbox-rows.ts';
import { readCatalogTables } from './read-catalog.ts';
import { sendable } from './sendable-value.ts';

/**
 * Before a mirrored table's SQL table is dropped (deleted upstream, or left out by the table
 * patterns): the rows inserted here and not created upstream yet hold their values nowhere else,
 * so each one's values go into its insert entry's `new_value`, as the body a create would send
 * (field name → API value). The entry then still says what was inserted, in SQL and in
 * `wsmirror outbox`, and a retry once the table is mirrored again creates the record from it.
 * An entry whose create was sent already keeps the body that send carried.
 */
export async function keepInsertedValues(ctx: MirrorContext, tx: WriteTx, tableId: string, sqlTable: string): Promise<void> {
  const d = ctx.driver;
  const cat = d.catalog(tx.db);
  const writable = (await readCatalogTables(d, cat)).fields.filter((f) => f.tableId === tableId && !f.readOnly);
  const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...writable.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
  const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${d.table(sqlTable)}
    WHERE ${sql.id(ID_COLUMN)} < 0`.execute(tx.db);
  for (const row of rows) {
    const body: Record<string, unknown> = {};
    writable.forEach((field, j) => {
      const read = sendable(ctx, field, row[`c${j + 1}`]);
      // A value JSON cannot carry is kept as its text: upstream refuses it, and says why.
      const value = 'value' in read ? read.value : String(row[`c${j + 1}`]);
      if (value !== null) body[field.fieldName] = value;
    });
    await cat.updateTable('_wsmirror_outbox').set({ new_value: jsonSql(ctx, body) })
      .where('table_id', '=', tableId).where('record_id', '=', Number(row['c0']))
      .where('operation', '=', 'insert').where('new_value', 'is', null).execute();
  }
}
