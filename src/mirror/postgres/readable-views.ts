import type { ReadableView } from '../readable-view.ts';
import { describeViewColumn } from '../readable-view.ts';
import type { SqlNames } from '../sql-text.ts';
import { quoteIdent, quoteLiteral } from '../sql-text.ts';
import { createViewStatement } from '../view-sql.ts';
import type { ViewExpressions } from '../view-sql.ts';

/**
 * Postgres readable views. JSON arrays become `text[]` (BI tools show them as lists, `unnest`
 * explodes them); appointments become a `tstzrange` and two `timestamptz`. A value that does not
 * convert (a bad local edit) gives NULL rather than an error that would fail every query of the
 * view. Comments carry the labels, as on the tables.
 */
const isArray = (column: string) => `jsonb_typeof(${column}) = 'array'`;

/** The conversion of appointment text to a range that gives NULL instead of failing. */
const RANGE_FUNCTION = '_wsmirror_tstzrange';

export function viewSetupSql(names: SqlNames): string[] {
  return [
    `CREATE OR REPLACE FUNCTION ${names.qualify(RANGE_FUNCTION)}(value text) RETURNS tstzrange
     LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE AS $range$
     BEGIN
       RETURN value::tstzrange;
     EXCEPTION WHEN others THEN
       RETURN NULL;
     END $range$`,
  ];
}

const expressions = (names: SqlNames): ViewExpressions => ({
  optionLabels: (column, optionJoin) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT COALESCE("_o"."label", "_j"."value") FROM jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ${optionJoin} ORDER BY "_j"."n") END`,
  idList: (column) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT "_j"."value" FROM jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ORDER BY "_j"."n") END`,
  rangeBound: (column, bound) => `${bound === 'start' ? 'lower' : 'upper'}(${names.qualify(RANGE_FUNCTION)}(${column}))`,
  range: (column) => `${names.qualify(RANGE_FUNCTION)}(${column})`,
});

export function createViewSql(names: SqlNames, view: ReadableView): string[] {
  const viewName = names.qualify(view.viewName);
  const out = [createViewStatement(names, view, expressions(names))];
  if (view.table.label !== null) out.push(`COMMENT ON VIEW ${viewName} IS ${quoteLiteral(view.table.label)}`);
  for (const c of view.columns) {
    const text = describeViewColumn(c);
    if (text !== null) out.push(`COMMENT ON COLUMN ${viewName}.${quoteIdent(c.name)} IS ${quoteLiteral(text)}`);
  }
  return out;
}
