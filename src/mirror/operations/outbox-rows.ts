import { sql } from 'kysely';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { MirrorField } from '../catalog.ts';
import type { MirrorContext } from '../mirror-context.ts';
import type { OutboxFilter } from '../outbox.ts';
import { sqlToApi } from '../value-codec.ts';

/** What the outbox operations share: filters, id lists, and decoding of stored entry values. */

type OutboxQuery<O> = SelectQueryBuilder<CatalogDb, '_wsmirror_outbox', O>;

/** Ids per statement: the list is one bound parameter (Dialect.idIn), this keeps each statement modest. */
const IDS_PER_SET = 10_000;

/** `entry_id IN (…)` for many entry ids, as one bound parameter. */
export function entryIdIn(ctx: MirrorContext, ids: readonly number[]) {
  return ctx.dialect.idIn(sql.ref('entry_id'), ids);
}

export function chunks<T>(items: readonly T[], size = IDS_PER_SET): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Applies an `OutboxFilter` to a query of `_wsmirror_outbox` (an empty list matches nothing). */
export function filtered<O>(query: OutboxQuery<O>, filter: OutboxFilter): OutboxQuery<O> {
  let q = query;
  if (filter.statuses) q = filter.statuses.length === 0 ? q.where(sql<boolean>`1 = 0`) : q.where('status', 'in', [...filter.statuses]);
  if (filter.tableIds) q = filter.tableIds.length === 0 ? q.where(sql<boolean>`1 = 0`) : q.where('table_id', 'in', [...filter.tableIds]);
  if (filter.entryIds) q = filter.entryIds.length === 0 ? q.where(sql<boolean>`1 = 0`) : q.where('entry_id', 'in', [...filter.entryIds]);
  return q;
}

/** Entry ids of the entries a filter selects (retry and discard work on these). */
export async function selectEntryIds(cat: Kysely<CatalogDb>, filter: OutboxFilter): Promise<number[]> {
  const rows = await filtered(cat.selectFrom('_wsmirror_outbox').select('entry_id'), filter).orderBy('entry_id').execute();
  return rows.map((r) => Number(r.entry_id));
}

/**
 * A stored old/new value (JSON of the SQL value: Postgres jsonb arrives parsed, SQLite holds text)
 * as an API value of the field; the JSON value itself when the field is no longer mirrored.
 */
export function decodeEntryValue(ctx: MirrorContext, field: MirrorField | undefined, stored: unknown): unknown {
  if (stored === null || stored === undefined) return null;
  const sqlValue = storedSqlValue(ctx, stored);
  if (!field) return sqlValue;
  try {
    return sqlToApi(field.fieldType, sqlValue, ctx.dialect.name);
  } catch {
    // A value typed by hand that does not fit: shown as stored; the push reports it.
    return sqlValue;
  }
}

/**
 * A stored old/new value as the SQL value it captured (null for none). Text that is not JSON
 * (`Inf`, as an older SQLite's `json_quote` wrote an infinity) comes back as it is: one such
 * entry must not stop the listing or the push of every other.
 */
export function storedSqlValue(ctx: MirrorContext, stored: unknown): unknown {
  if (stored === null || stored === undefined) return null;
  if (ctx.dialect.jsonArrivesParsed) return stored;
  try {
    return JSON.parse(stored as string);
  } catch {
    return stored;
  }
}

/** A stored value as SQL comparing equal to the JSON column (`new_value = …`). */
export function jsonSql(ctx: MirrorContext, value: unknown) {
  return sql`CAST(${JSON.stringify(value)} AS ${sql.raw(ctx.dialect.catalogColumnTypes.json)})`;
}
