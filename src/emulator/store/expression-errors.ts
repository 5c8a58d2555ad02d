import type { EmulatorContext } from '../context.ts';
import { ModuleTables } from './expression-scope.ts';
import { orderedProps } from './field-props.ts';
import { publicId } from './ids.ts';
import { toFieldRow, type FieldRow, type RawField, type TableRow } from './schema-rows.ts';
import { sameJson } from './schema-writes.ts';
import { compileField, expressionSources } from './table-expressions.ts';

/**
 * `expressionErrors` kept current. A field's expressions are checked after it is saved, against
 * the schema as it then is, and again whenever that schema changes under them: a field or table
 * created, renamed or deleted may make an expression that names it check, or stop checking. A
 * field whose `expressionErrors` change by this has changed, and is logged as `Field upserted`,
 * so that a client polling the schema learns of it.
 *
 * An expression names a field of its own table, or a field of a table of its module that it
 * selects (`select T`), each written out in its text as a whole word (names have no escapes). So
 * a change of fields of table T concerns the fields of T whose expressions name one of them, and
 * the fields of other tables whose expressions name one of them and T too; a change of tables,
 * the fields whose expressions name one of the tables. Only those are compiled again: the work
 * grows with the fields of the module, never with records.
 */

export interface ExpressionRecheck {
  /** Fields to check in any case: those the request saved. */
  readonly fieldKeys?: readonly number[];
  /** Fields of these tables, by these names, appeared or went away. */
  readonly fields?: readonly { readonly table: Pick<TableRow, 'key' | 'name'>; readonly names: readonly string[] }[];
  /** Tables of these names appeared or went away. */
  readonly tables?: readonly string[];
  /** Fields already logged as changed by the request (not logged twice). */
  readonly logged?: readonly number[];
}

/** Checks the fields of `module` that `what` concerns and saves their `expressionErrors`; returns the keys of those that changed. */
export function refreshExpressionErrors(
  ctx: EmulatorContext, module: Pick<TableRow, 'moduleKey' | 'moduleName'>, what: ExpressionRecheck, at: number,
): number[] {
  const keys = what.fieldKeys ?? [];
  const changes = (what.fields ?? []).filter((c) => c.names.length > 0)
    .map((c) => ({ tableKey: c.table.key, table: wholeWord(c.table.name), names: c.names.map(wholeWord) }));
  const tableNames = (what.tables ?? []).map(wholeWord);
  const names = [...(what.fields ?? []).flatMap((c) => c.names), ...(what.tables ?? [])];
  if (keys.length === 0 && names.length === 0) return [];

  // Every field the names concern holds one of them in its stored properties: SQLite narrows to those.
  const found = ctx.db
    .prepare(
      `SELECT f.id, f.table_id, f.name, f.type, f.position, f.props, t.name AS table_name
       FROM fields f JOIN tables t ON t.id = f.table_id
       WHERE t.module_id = ? AND (f.id IN (SELECT value FROM json_each(?))
         OR EXISTS (SELECT 1 FROM json_each(?) AS n WHERE instr(f.props, n.value) > 0))
       ORDER BY f.table_id, f.position, f.id`,
    )
    .all(module.moduleKey, JSON.stringify(keys), JSON.stringify(names)) as (RawField & { table_name: string })[];
  const concerned = (row: FieldRow): boolean => {
    // A field the request saved is checked even without expressions: it may have just lost its last one.
    if (keys.includes(row.key)) return true;
    const sources = expressionSources(row);
    const names = (word: RegExp) => sources.some((source) => word.test(source));
    return tableNames.some(names)
      || changes.some((c) => c.names.some(names) && (c.tableKey === row.tableKey || names(c.table)));
  };
  const rows = found.map((raw) => ({ row: toFieldRow(raw), table: raw.table_name })).filter(({ row }) => concerned(row));
  if (rows.length === 0) return [];

  const tables = new ModuleTables(ctx, module.moduleName);
  const update = ctx.db.prepare('UPDATE fields SET props = ? WHERE id = ?');
  const changed: number[] = [];
  for (const { row, table } of rows) {
    const scope = tables.find(table)!;
    const errors = compileField(scope.field(row.name)!, scope, tables).errors;
    const props = orderedProps({ ...row.props, expressionErrors: errors.length > 0 ? [...errors] : undefined });
    if (sameJson(props, row.props)) continue;
    update.run(JSON.stringify(props), row.key);
    changed.push(row.key);
    if (!what.logged?.includes(row.key)) ctx.changes.schemaChanged('Field', publicId('field', row.key), 'upserted', at);
  }
  return changed;
}

/** A name as the lexer reads it: not inside a longer name (names are letters, digits and `_`). */
function wholeWord(name: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`);
}
