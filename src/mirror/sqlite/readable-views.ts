import type { ReadableView } from '../readable-view.ts';
import type { SqlNames } from '../sql-text.ts';
import { createViewStatement, dropViewStatement } from '../view-sql.ts';
import type { ViewExpressions } from '../view-sql.ts';

/**
 * SQLite readable views. JSON arrays become comma-separated text; a value that is not a JSON
 * array (a bad local edit) gives NULL rather than an error that would fail every query of the
 * view. Orders go through a subquery (not `group_concat(… ORDER BY …)`) so that older SQLite
 * libraries reading the file, such as DuckDB's, understand the view.
 */
const isArray = (column: string) => `json_valid(${column}) AND json_type(${column}) = 'array'`;

const EXPRESSIONS: ViewExpressions = {
  optionLabels: (column, optionJoin) =>
    `CASE WHEN ${isArray(column)} THEN (SELECT group_concat("_v", ', ') FROM (SELECT COALESCE("_o"."label", "_j"."value") AS "_v" FROM json_each(${column}) AS "_j" ${optionJoin} ORDER BY "_j"."key")) END`,
  idList: (column) =>
    `CASE WHEN ${isArray(column)} THEN (SELECT group_concat("_v", ', ') FROM (SELECT "_j"."value" AS "_v" FROM json_each(${column}) AS "_j" ORDER BY "_j"."key")) END`,
  rangeBound: (column, bound) => {
    const comma = `instr(${column}, ',')`;
    const wellFormed = `substr(${column}, 1, 1) = '[' AND ${comma} > 0 AND substr(${column}, -1, 1) = ')'`;
    const part = bound === 'start'
      ? `substr(${column}, 2, ${comma} - 2)`
      : `substr(${column}, ${comma} + 1, length(${column}) - ${comma} - 1)`;
    return `CASE WHEN ${wellFormed} THEN ${part} END`;
  },
  // SQLite has no range type: the view shows the bounds only (Dialect.viewTypes.range is null).
  range: () => 'NULL',
};

export function createViewSql(names: SqlNames, view: ReadableView): string[] {
  return [createViewStatement(names, view, EXPRESSIONS)];
}

/**
 * SQLite checks no view when one is dropped: `before` is dropped and `after` created (see
 * Dialect.remakeViewSql). Views of users' own find it again by name, reading the columns they
 * name (operations/users-views.ts checks that they still can).
 */
export function remakeViewSql(names: SqlNames, before: ReadableView, after: ReadableView): string[] {
  return [dropViewStatement(names, before.viewName), createViewStatement(names, after, EXPRESSIONS)];
}
