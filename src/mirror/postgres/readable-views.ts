import type { ReadableView } from '../readable-view.ts';
import { describeViewColumn } from '../readable-view.ts';
import type { SqlNames } from '../sql-text.ts';
import { quoteIdent, quoteLiteral } from '../sql-text.ts';
import { createViewStatement } from '../view-sql.ts';
import type { ViewExpressions } from '../view-sql.ts';

/**
 * Postgres readable views. JSON arrays become `text[]` (BI tools show them as lists, `unnest`
 * explodes them); a value that is not a JSON array gives NULL rather than an error. Comments carry
 * the labels, as on the tables.
 */
const isArray = (column: string) => `jsonb_typeof(${column}) = 'array'`;

const EXPRESSIONS: ViewExpressions = {
  optionLabels: (column, optionJoin) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT COALESCE("_o"."label", "_j"."value") FROM jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ${optionJoin} ORDER BY "_j"."n") END`,
  idList: (column) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT "_j"."value" FROM jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ORDER BY "_j"."n") END`,
  rangeBound: (column, bound) => {
    const part = bound === 'start' ? `split_part(${column}, ',', 1)` : `split_part(${column}, ',', 2)`;
    const trimmed = bound === 'start' ? `substr(${part}, 2)` : `left(${part}, -1)`;
    return `CASE WHEN ${column} LIKE '[%,%)' THEN ${trimmed} END`;
  },
};

export function createViewSql(names: SqlNames, view: ReadableView): string[] {
  const viewName = names.qualify(view.viewName);
  const out = [createViewStatement(names, view, EXPRESSIONS)];
  if (view.table.label !== null) out.push(`COMMENT ON VIEW ${viewName} IS ${quoteLiteral(view.table.label)}`);
  for (const c of view.columns) {
    const text = describeViewColumn(c);
    if (text !== null) out.push(`COMMENT ON COLUMN ${viewName}.${quoteIdent(c.name)} IS ${quoteLiteral(text)}`);
  }
  return out;
}
