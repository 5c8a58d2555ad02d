import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { CATALOG_TABLES } from './catalog-tables.ts';
import type { CatalogColumn, CatalogTableDef } from './catalog-tables.ts';
import type { Dialect } from './dialect.ts';
import { quoteIdent, quoteLiteral } from './sql-text.ts';

/** The catalog tables of a dialect: the common ones and its own. */
export function catalogTablesOf(dialect: Dialect): readonly CatalogTableDef[] {
  return [...CATALOG_TABLES, ...dialect.extraCatalogTables];
}

export function columnDdl(dialect: Dialect, c: CatalogColumn, inlinePk: boolean): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql.id(c.name), sql.raw(dialect.catalogColumnTypes[c.kind])];
  if (inlinePk) parts.push(sql.raw(dialect.serialPrimaryKey));
  else if (c.notNull) parts.push(sql.raw('NOT NULL'));
  if (c.default === 'now') parts.push(sql`DEFAULT ${sql.raw(dialect.nowSql)}`);
  else if (c.default) parts.push(sql`DEFAULT ${sql.lit(c.default.literal)}`);
  if (c.oneOf) parts.push(sql.raw(oneOfCheckSql(c.name, c.oneOf)));
  return sql.join(parts, sql` `);
}

/**
 * The CHECK of a column that holds one of a few words, as comparisons joined by OR. Not `IN
 * (…)`: SQLite builds an IN list's look-up table again for every row a trigger inserts, which
 * made each captured edit cost about twice as much (the outbox has two such checks).
 */
export function oneOfCheckSql(column: string, values: readonly string[]): string {
  return `CHECK (${values.map((v) => `${quoteIdent(column)} = ${quoteLiteral(v)}`).join(' OR ')})`;
}

/** CREATE TABLE / INDEX IF NOT EXISTS statements of one catalog table. */
export function catalogTableDdl(
  dialect: Dialect, def: CatalogTableDef, table: (name: string) => RawBuilder<unknown>,
): RawBuilder<unknown>[] {
  const serialPk = def.primaryKey.length === 1 && def.columns.find((c) => c.name === def.primaryKey[0])?.kind === 'serial';
  const items = def.columns.map((c) => columnDdl(dialect, c, serialPk && c.name === def.primaryKey[0]));
  if (!serialPk) items.push(sql`PRIMARY KEY (${sql.join(def.primaryKey.map((c) => sql.id(c)))})`);
  const out = [sql`CREATE TABLE IF NOT EXISTS ${table(def.name)} (${sql.join(items)})`];
  for (const index of def.indexes ?? []) {
    out.push(sql`CREATE INDEX IF NOT EXISTS ${sql.id(index.name)} ON ${table(def.name)} (${sql.join(index.columns.map((c) => sql.id(c)))})`);
  }
  return out;
}
