import type { ReadableView, ViewColumn } from './readable-view.ts';

/**
 * Whether a readable view can become another in place, as Postgres' CREATE OR REPLACE VIEW
 * allows: every column it has stays, in the same order and with the same type, and new ones
 * come after them. Views of users' own on it, bound to its columns by position, keep reading
 * them. Columns are matched by what they show, not by name: a field renamed upstream renames
 * its column and companions (ALTER VIEW … RENAME COLUMN), and a companion whose name gets a hash
 * suffix (another column took its name) is still the same column. Pure.
 */

/**
 * The columns of `before` that `after` shows under another name (old name → new), when `after`
 * keeps all of `before`'s columns at its start; undefined when it drops, moves or retypes one.
 */
export function viewColumnRenames(before: ReadableView, after: ReadableView): Map<string, string> | undefined {
  if (after.columns.length < before.columns.length) return undefined;
  const renames = new Map<string, string>();
  for (const [i, old] of before.columns.entries()) {
    const now = after.columns[i]!;
    if (columnKey(old) !== columnKey(now) || sqlTypeOf(old) !== sqlTypeOf(now)) return undefined;
    if (old.name !== now.name) renames.set(old.name, now.name);
  }
  return renames;
}

/** The column names of `before` that `after` gives to another field or companion (names swapped upstream). */
export function namesGivenToOthers(before: ReadableView, after: ReadableView): string[] {
  const keyOf = new Map(after.columns.map((c) => [c.name, columnKey(c)]));
  return before.columns.filter((c) => keyOf.has(c.name) && keyOf.get(c.name) !== columnKey(c)).map((c) => c.name);
}

/** What a column shows, whatever its name: a system column, or one field's column or companion. */
function columnKey(column: ViewColumn): string {
  return column.field === null ? `system:${column.name}` : `${column.field.fieldId}:${column.kind}`;
}

/** The SQL type of a field's own column; a companion's type follows from its kind, a system column's never changes. */
function sqlTypeOf(column: ViewColumn): string | null {
  return column.kind === 'column' && column.field !== null ? column.field.sqlType : null;
}
