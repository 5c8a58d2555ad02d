import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { CatalogDb } from '../catalog-tables.ts';
import type { ColumnSpec, RowsToKeep } from '../dialect-driver.ts';
import { hash8 } from '../naming.ts';
import { type CopyTextRows, ROW_NUMBER_COLUMN } from './copy-text.ts';

/** Where a batch of COPY text goes: one table, inside one write transaction's connection. */
export interface CopyTarget {
  client: pg.PoolClient;
  db: Kysely<CatalogDb>;
  /** The schema-qualified table. */
  table: RawBuilder<unknown>;
  /** Schema and table name, so each table's stage has a name of its own. */
  schema: string;
  sqlTable: string;
  /** The stages created on this connection so far (temp tables live as long as it). */
  stages: Set<string>;
}

/**
 * Writes a batch of rows to a Postgres table through COPY. A batch that can conflict with no row
 * (every id above the table's highest, no repeated id, no local edit to keep) is copied straight
 * into the table. Any other is copied into a session temp table shaped like the target (plus a
 * number for each line) and upserted from it with one INSERT … SELECT … ON CONFLICT; rows with
 * local edits (rare) are left out of that statement, then those with kept columns written one
 * by one from the stage.
 */
export async function copyUpsert(target: CopyTarget, columns: readonly ColumnSpec[], rows: CopyTextRows, keep?: RowsToKeep): Promise<void> {
  if (rows.ids.length === 0) return;
  const { client, db } = target;
  const names = sql.join(columns.map((c) => sql.id(c.name)));
  const held = keep ? rows.ids.filter((id) => keep.wholeRows.has(id) || keep.columns.has(id)) : [];
  if (!rows.repeatedIds && held.length === 0 && await allAboveTable(target, rows.ids)) {
    // A backfill, or records created upstream since: about half the server's work of the stage
    // and upsert. Only the daemon writes upstream ids (local inserts get negative ones), so no
    // other writer can add one meanwhile; one that bypassed the triggers would make this write
    // fail, and the next cycle take the upsert.
    const direct = sql`COPY ${target.table} (${names}) FROM STDIN`.compile(db);
    await pipeline(Readable.from(rows.chunks()), client.query(copyFrom(direct.sql)));
    return;
  }
  // The stage's name follows the column layout, so a schema change gets a new one.
  const stage = `_wsmirror_stage_${hash8(JSON.stringify([target.schema, target.sqlTable, columns, ROW_NUMBER_COLUMN, 'identity']))}`;
  const row = sql.id(ROW_NUMBER_COLUMN);
  if (!target.stages.has(stage)) {
    await sql`CREATE TEMP TABLE IF NOT EXISTS ${sql.id(stage)} (${row} bigint GENERATED ALWAYS AS IDENTITY, ${sql.join(
      columns.map((c) => sql`${sql.id(c.name)} ${sql.raw(columnType(c.sqlType))}`),
    )}) ON COMMIT DELETE ROWS`.execute(db);
    target.stages.add(stage);
  }
  const copy = sql`COPY ${sql.id(stage)} (${names}) FROM STDIN`.compile(db);
  await pipeline(Readable.from(rows.chunks()), client.query(copyFrom(copy.sql)));
  const upsert = (kept: ReadonlySet<string> | undefined) => sql.join(columns
    .filter((c) => c.name !== 'id' && !kept?.has(c.name))
    .map((c) => sql`${sql.id(c.name)} = excluded.${sql.id(c.name)}`));
  // The last line of a repeated id wins (one statement cannot upsert a row twice).
  const source = rows.repeatedIds
    ? sql`(SELECT DISTINCT ON (${sql.id('id')}) * FROM ${sql.id(stage)} ORDER BY ${sql.id('id')}, ${row} DESC) AS ${sql.id('last')}`
    : sql.id(stage);
  const except = held.length > 0 ? sql` WHERE ${sql.id('id')} <> ALL(${held}::bigint[])` : sql``;
  await sql`INSERT INTO ${target.table} (${names}) SELECT ${names} FROM ${source}${except}
    ON CONFLICT (${sql.id('id')}) DO UPDATE SET ${upsert(undefined)}`.execute(db);
  for (const id of held) {
    const kept = keep!.wholeRows.has(id) ? undefined : keep!.columns.get(id);
    if (!kept) continue;
    await sql`INSERT INTO ${target.table} (${names})
      SELECT ${names} FROM ${sql.id(stage)} WHERE ${sql.id('id')} = ${id} ORDER BY ${row} DESC LIMIT 1
      ON CONFLICT (${sql.id('id')}) DO UPDATE SET ${upsert(kept)}`.execute(db);
  }
}

/** True when every id is above the highest id in the table (or the table is empty). */
async function allAboveTable(target: CopyTarget, ids: readonly number[]): Promise<boolean> {
  let lowest = Infinity;
  for (const id of ids) if (id < lowest) lowest = id;
  const { rows } = await sql<{ highest: string | number | null }>`SELECT max(${sql.id('id')}) AS ${sql.id('highest')}
    FROM ${target.table}`.execute(target.db);
  const highest = rows[0]?.highest;
  return highest === null || highest === undefined || lowest > Number(highest);
}

/** The mirror's own column types are all plain words; anything else is refused. */
function columnType(sqlType: string): string {
  if (!/^[a-z ]+$/.test(sqlType)) throw new Error(`unexpected column type ${JSON.stringify(sqlType)}`);
  return sqlType;
}
