import type { ReadableView } from '../readable-view.ts';
import { describeViewColumn } from '../readable-view.ts';
import type { SqlNames } from '../sql-text.ts';
import { quoteIdent, quoteLiteral } from '../sql-text.ts';
import { temporaryName } from '../naming.ts';
import { viewColumnRenames } from '../view-growth.ts';
import { createViewStatement } from '../view-sql.ts';
import type { ViewExpressions } from '../view-sql.ts';

/**
 * Postgres readable views. JSON arrays become `text[]` (BI tools show them as lists, `unnest`
 * explodes them); an appointment (a `tstzrange` column) gets its range again under the view's
 * naming and its two bounds as `timestamptz`. A JSON value that is not an array (a bad local
 * edit) gives NULL rather than an error that would fail every query of the view. Comments carry
 * the labels, as on the tables. A view binds its calls when it is made, on the search path of the
 * session making it: they name pg_catalog's functions, so that none planted on a path (a
 * `lower(tstzrange)` in `public`, a closer match than pg_catalog's polymorphic one) is bound and
 * run for every reader (search-path.ts).
 */
const isArray = (column: string) => `pg_catalog.jsonb_typeof(${column}) = 'array'`;

/** A function the views of older mirrors used, when appointment columns were text. */
const OLD_RANGE_FUNCTION = '_wsmirror_tstzrange';

/**
 * The old view of a table whose migration is held back (operations/unmigrated-tables.ts) still
 * uses it: it goes with the last of them.
 */
export function viewSetupSql(names: SqlNames): string[] {
  return [`DO $setup$ BEGIN DROP FUNCTION IF EXISTS ${names.qualify(OLD_RANGE_FUNCTION)}(text); `
    + 'EXCEPTION WHEN dependent_objects_still_exist THEN NULL; END $setup$'];
}

const EXPRESSIONS: ViewExpressions = {
  optionLabels: (column, optionJoin) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT COALESCE("_o"."label", "_j"."value") FROM pg_catalog.jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ${optionJoin} ORDER BY "_j"."n") END`,
  idList: (column) =>
    `CASE WHEN ${isArray(column)} THEN ARRAY(SELECT "_j"."value" FROM pg_catalog.jsonb_array_elements_text(${column}) WITH ORDINALITY AS "_j"("value", "n") ORDER BY "_j"."n") END`,
  // Appointment columns are tstzrange (appointment-range.ts).
  rangeBound: (column, bound) => `pg_catalog.${bound === 'start' ? 'lower' : 'upper'}(${column})`,
  range: (column) => column,
};

export function createViewSql(names: SqlNames, view: ReadableView): string[] {
  return viewSql(names, view, false);
}

/**
 * Makes the view `before` (under its name as it stands) into `after` in place, so that views of
 * users' own on it stay, bound to its columns (see Dialect.remakeViewSql): renamed, its columns
 * renamed, then CREATE OR REPLACE VIEW with its comments. Null when Postgres cannot: `after`
 * does not keep `before`'s columns at its start (view-growth.ts).
 */
export function remakeViewSql(names: SqlNames, before: ReadableView, after: ReadableView): string[] | null {
  const renames = viewColumnRenames(before, after);
  if (renames === undefined) return null;
  const viewName = names.qualify(after.viewName);
  const out: string[] = [];
  // IF EXISTS: a view dropped outside wsmirror is made again by the CREATE OR REPLACE.
  if (before.viewName !== after.viewName) out.push(`ALTER VIEW IF EXISTS ${names.qualify(before.viewName)} RENAME TO ${quoteIdent(after.viewName)}`);
  const renameColumn = (from: string, to: string) => `ALTER VIEW ${viewName} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`;
  const held = new Set(before.columns.map((c) => c.name));
  if ([...renames.values()].every((to) => !held.has(to))) {
    for (const [from, to] of renames) out.push(renameColumn(from, to));
  } else {
    // Names swapped or chained: each goes through a temporary name first.
    const pairs = [...renames];
    pairs.forEach(([from], i) => out.push(renameColumn(from, temporaryName(i))));
    pairs.forEach(([, to], i) => out.push(renameColumn(temporaryName(i), to)));
  }
  return [...out, ...viewSql(names, after, true)];
}

/** With `orReplace`, comments that are gone are removed: the view in place keeps those it had. */
function viewSql(names: SqlNames, view: ReadableView, orReplace: boolean): string[] {
  const viewName = names.qualify(view.viewName);
  const out = [createViewStatement(names, view, EXPRESSIONS, orReplace)];
  const comment = (text: string | null) => (text === null ? 'NULL' : quoteLiteral(text));
  if (view.table.label !== null || orReplace) out.push(`COMMENT ON VIEW ${viewName} IS ${comment(view.table.label)}`);
  for (const c of view.columns) {
    const text = describeViewColumn(c);
    if (text !== null || orReplace) out.push(`COMMENT ON COLUMN ${viewName}.${quoteIdent(c.name)} IS ${comment(text)}`);
  }
  return out;
}

/** The view's columns are the same, so the views of users' own on it stay (see Dialect.rebindViewSql). */
export function rebindViewSql(names: SqlNames, view: ReadableView): string[] {
  return [createViewStatement(names, view, EXPRESSIONS, true)];
}
