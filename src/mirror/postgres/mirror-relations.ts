import { CATALOG_PREFIX } from '../naming.ts';
import { quoteIdent, quoteLiteral } from '../sql-text.ts';

/**
 * The relations of the mirror in `schema`, as a FROM item `w` of one column, `relation` (an oid):
 * the tables its catalog names, and its catalog's own (`_wsmirror_*`). Reached by the indexes of
 * pg_class (a name's lookup, a range of names in the schema), never by reading the whole catalog,
 * which costs in proportion to every relation of the database (14 ms a read in one of 10,000):
 * the catalog read of every cycle runs what is built on it.
 */
export function mirrorRelationsSql(schema: string): string {
  const literal = quoteLiteral(schema);
  return `(SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', ${literal}::text, x.name))::oid AS relation
      FROM (SELECT sql_name AS name FROM ${quoteIdent(schema)}."_wsmirror_tables"
        UNION SELECT c0.relname::text FROM pg_catalog.pg_class c0
          WHERE c0.relnamespace = pg_catalog.to_regnamespace(pg_catalog.quote_ident(${literal}))::oid
          AND c0.relname >= ${quoteLiteral(CATALOG_PREFIX)} AND c0.relname < ${quoteLiteral(`${CATALOG_PREFIX.slice(0, -1)}~`)}) x) w`;
}
