import { sql } from 'kysely';
import type { MirrorField, MirrorTable } from '../catalog.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN, SYNCED_AT_COLUMN, SYSTEM_COLUMN_COMMENTS } from '../naming.ts';

/**
 * The SQL table of a mirrored table, empty, with its comments: for a table new to the mirror
 * (apply-schema-plan.ts), and for one whose SQL table was dropped outside wsmirror, made again
 * from its catalog rows (reset-tables.ts). Its catalog rows and derived objects are the caller's.
 */
export async function createSqlTable(ctx: MirrorContext, tx: WriteTx, table: MirrorTable, fields: readonly MirrorField[]): Promise<void> {
  const d = ctx.driver;
  const types = ctx.dialect.systemColumnTypes;
  const columns = [
    sql`${sql.id(ID_COLUMN)} ${sql.raw(types.id)} PRIMARY KEY`,
    // NULL until wsmirror writes the row: a row inserted locally has not been synced yet.
    sql`${sql.id(SYNCED_AT_COLUMN)} ${sql.raw(types.syncedAt)}`,
    ...fields.map((f) => sql`${sql.id(f.columnName)} ${sql.raw(f.sqlType)}`),
  ];
  await sql`CREATE TABLE ${d.table(table.sqlName)} (${sql.join(columns)})`.execute(tx.db);
  const sqlTable = table.sqlName;
  await d.comment(tx, [
    { sqlTable, column: null, text: table.label },
    ...Object.entries(SYSTEM_COLUMN_COMMENTS).map(([column, text]) => ({ sqlTable, column, text })),
    ...fields.map((f) => ({ sqlTable, column: f.columnName, text: f.label })),
  ]);
}
