import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import type { DroppedRelations } from '../dialect-driver.ts';
import type { SqlNames } from '../sql-text.ts';

/**
 * The views (and materialized views) other than the mirror's own, `own`, that read what `dropped`
 * names, each as Postgres's refusal would name it ("view bi.mine depends on view mirror.x_v").
 * Found in the catalogs, without a lock: DROP looks for the objects depending on what it drops
 * only once it holds that, and then locks each of them, so a query of such a view that arrived
 * meanwhile (holding the view, waiting for what it reads) deadlocked with the refused change.
 */
export async function viewsDependingOn(
  db: Kysely<CatalogDb>, names: SqlNames, dropped: DroppedRelations, own: readonly string[],
): Promise<string[]> {
  const wholes = dropped.relations.map((r) => names.qualify(r));
  const tables = dropped.columns.map((c) => names.qualify(c.table));
  const columns = dropped.columns.map((c) => c.column);
  if (wholes.length === 0 && tables.length === 0) return [];
  const rows = await sql<{ text: string }>`
    WITH gone(rel, attnum) AS (
      SELECT pg_catalog.to_regclass(w), 0::int2 FROM unnest(${wholes}::text[]) AS w
      UNION ALL
      SELECT a.attrelid, a.attnum FROM unnest(${tables}::text[], ${columns}::text[]) AS c(t, col)
        JOIN pg_catalog.pg_attribute a ON a.attrelid = pg_catalog.to_regclass(c.t) AND a.attname = c.col AND NOT a.attisdropped
    ), own(oid) AS (SELECT pg_catalog.to_regclass(o) FROM unnest(${own.map((o) => names.qualify(o))}::text[]) AS o)
    SELECT DISTINCT (CASE v.relkind WHEN 'm' THEN 'materialized view ' ELSE 'view ' END) || v.oid::regclass::text || ' depends on '
      || (CASE WHEN g.attnum = 0
        THEN (CASE r.relkind WHEN 'v' THEN 'view ' ELSE 'table ' END) || g.rel::regclass::text
        ELSE 'column ' || pg_catalog.quote_ident(a.attname) || ' of table ' || g.rel::regclass::text END) AS text
    FROM gone g
    JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = g.rel
      AND (g.attnum = 0 OR d.refobjsubid = g.attnum) AND d.classid = 'pg_catalog.pg_rewrite'::regclass
    JOIN pg_catalog.pg_rewrite rw ON rw.oid = d.objid
    JOIN pg_catalog.pg_class v ON v.oid = rw.ev_class
    JOIN pg_catalog.pg_class r ON r.oid = g.rel
    LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = g.rel AND a.attnum = g.attnum AND g.attnum > 0
    WHERE v.oid <> g.rel AND NOT EXISTS (SELECT 1 FROM own WHERE own.oid = v.oid)
    ORDER BY 1`.execute(db);
  return rows.rows.map((r) => r.text);
}
