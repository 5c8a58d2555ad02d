import type { ReadableView, ViewColumn } from './readable-view.ts';
import { ID_COLUMN } from './naming.ts';
import type { SqlNames } from './sql-text.ts';
import { quoteIdent, quoteLiteral } from './sql-text.ts';

/**
 * The SELECT of a readable view (readable-view.ts) as SQL text, shared by the dialects: each
 * gives the expressions that differ between them (JSON arrays, appointment bounds).
 */
export interface ViewExpressions {
  /** Labels of the option ids in the JSON array `column`, in order (`options` joins an element `"_j"."value"` to its option). */
  optionLabels(column: string, optionJoin: string): string;
  /** The ids in the JSON array `column`, in order, as readable text or a text array. */
  idList(column: string): string;
  /** Start or end of the appointment `column` (Dialect.appointments). */
  rangeBound(column: string, bound: 'start' | 'end'): string;
  /** The appointment `column` as a range (only where `Dialect.viewTypes.range` is set). */
  range(column: string): string;
}

/** Alias of the mirrored table inside a view. */
const T = quoteIdent('_t');

export function tableColumn(name: string): string {
  return `${T}.${quoteIdent(name)}`;
}

/** `CREATE VIEW … AS SELECT …` of `view` (`CREATE OR REPLACE VIEW` with `orReplace`, where the dialect has it). */
export function createViewStatement(names: SqlNames, view: ReadableView, x: ViewExpressions, orReplace = false): string {
  const items = view.columns.map((c) => `${columnExpression(names, view, c, x)} AS ${quoteIdent(c.name)}`);
  return `CREATE ${orReplace ? 'OR REPLACE ' : ''}VIEW ${names.qualify(view.viewName)} AS SELECT ${items.join(', ')} FROM ${names.qualify(view.table.sqlName)} AS ${T}`;
}

function columnExpression(names: SqlNames, view: ReadableView, c: ViewColumn, x: ViewExpressions): string {
  if (c.kind === 'column') return tableColumn(c.name);
  const column = tableColumn(c.field.columnName);
  // Options are matched by upstream ids, which never change: the view survives renames.
  const optionsOf = (optionId: string) => [
    `"_o"."table_id" = ${quoteLiteral(view.table.tableId)}`,
    `"_o"."field_id" = ${quoteLiteral(c.field.fieldId)}`,
    `"_o"."option_id" = ${optionId}`,
  ].join(' AND ');
  const options = names.qualify('_wsmirror_choice_options');
  switch (c.kind) {
    case 'optionLabel':
      return `COALESCE((SELECT "_o"."label" FROM ${options} AS "_o" WHERE ${optionsOf(column)}), ${column})`;
    case 'optionLabels':
      return x.optionLabels(column, `LEFT JOIN ${options} AS "_o" ON ${optionsOf('"_j"."value"')}`);
    case 'idList':
      return x.idList(column);
    case 'referenceLabel': {
      if (c.target === null) return 'CAST(NULL AS TEXT)';
      const shown = tableColumnOf('_r', c.target.display?.columnName ?? ID_COLUMN);
      return `(SELECT CAST(${shown} AS TEXT) FROM ${names.qualify(c.target.table.sqlName)} AS "_r" WHERE ${tableColumnOf('_r', ID_COLUMN)} = ${column})`;
    }
    case 'rangeStart': return x.rangeBound(column, 'start');
    case 'rangeEnd': return x.rangeBound(column, 'end');
    case 'range': return x.range(column);
  }
}

function tableColumnOf(alias: string, column: string): string {
  return `${quoteIdent(alias)}.${quoteIdent(column)}`;
}

export function dropViewStatement(names: SqlNames, viewName: string): string {
  return `DROP VIEW IF EXISTS ${names.qualify(viewName)}`;
}
