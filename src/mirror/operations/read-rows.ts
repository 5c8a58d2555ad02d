import { sql } from 'kysely';
import type { ApiRecord } from '../../api/records.ts';
import type { RecordId, StreamIdsOptions } from '../mirror.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN, SYNCED_AT_COLUMN } from '../naming.ts';
import { sqlToApi } from '../value-codec.ts';
import { mirroredTable } from './read-catalog.ts';
import { requireRecordId } from './record-ids.ts';


/** Ids of a table in ascending order, read page by page (bounded memory). */
export async function* streamIds(ctx: MirrorContext, tableId: string, options: StreamIdsOptions = {}): AsyncIterable<number> {
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 10_000));
  let last = options.after ?? 0;
  const id = sql.id(ID_COLUMN);
  const before = options.before === undefined ? sql`` : sql` AND ${id} < ${options.before}`;
  const synced = options.syncedBefore === undefined ? sql`` : sql` AND ${sql.id(SYNCED_AT_COLUMN)} < ${options.syncedBefore}`;
  for (;;) {
    // Each page is its own short query (keyset paging): no long-lived read transaction.
    const { table } = await mirroredTable(ctx, tableId);
    const { rows } = await sql<{ id: number | bigint }>`SELECT ${id} FROM ${ctx.driver.table(table.sqlName)}
      WHERE ${id} > ${last}${before}${synced} ORDER BY ${id} LIMIT ${pageSize}`.execute(ctx.driver.db);
    for (const r of rows) yield Number(r.id);
    if (rows.length < pageSize) return;
    last = Number(rows[rows.length - 1]!.id);
  }
}

/** Number of rows in a table. */
export async function countRows(ctx: MirrorContext, tableId: string): Promise<number> {
  const { table } = await mirroredTable(ctx, tableId);
  const { rows } = await sql<{ n: number | bigint | string }>`SELECT count(*) AS ${sql.id('n')} FROM ${ctx.driver.table(table.sqlName)}`
    .execute(ctx.driver.db);
  return Number(rows[0]?.n ?? 0);
}

/** Rows by id, decoded back to API values (keyed by field name); missing ids are left out. */
export async function readRows(ctx: MirrorContext, tableId: string, ids: readonly RecordId[]): Promise<ApiRecord[]> {
  const { table, fields } = await mirroredTable(ctx, tableId);
  const wanted = [...new Set(ids.map((id) => requireRecordId(id, table.sqlName)))].sort((a, b) => a - b);
  const out: ApiRecord[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    const chunk = wanted.slice(i, i + 500);
    // Positional aliases: a column called `__proto__` would not survive as a row object key.
    const selected = [sql`${sql.id(ID_COLUMN)} AS ${sql.id('c0')}`, ...fields.map((f, j) => sql`${sql.id(f.columnName)} AS ${sql.id(`c${j + 1}`)}`)];
    const { rows } = await sql<Record<string, unknown>>`SELECT ${sql.join(selected)} FROM ${ctx.driver.table(table.sqlName)}
      WHERE ${sql.id(ID_COLUMN)} IN (${sql.join(chunk)}) ORDER BY ${sql.id(ID_COLUMN)}`.execute(ctx.driver.db);
    for (const row of rows) {
      const values = Object.fromEntries(fields.map((f, j) => [f.fieldName, sqlToApi(f.fieldType, row[`c${j + 1}`], ctx.dialect.name)]));
      out.push({ id: String(row['c0']), values });
    }
  }
  return out;
}
