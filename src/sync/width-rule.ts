import type { Workspace } from '../api/workspace.ts';
import type { DialectName } from '../mirror/dialect.ts';
import { DIALECTS } from '../mirror/dialects.ts';
import { SYSTEM_COLUMNS } from '../mirror/naming.ts';
import { viewColumnCount } from '../mirror/readable-view.ts';
import { compileTableFilter, type TableFilter } from '../mirror/table-filter.ts';
import { refusal, type RefusedTable } from './name-rule.ts';

/**
 * The included tables the mirror's database cannot hold: more columns than a table takes, or a
 * readable view wider than a result row may be (a `choice`, `multi` or `reference` field shows
 * two columns there, an appointment three). Refused before the schema's one transaction, which
 * such a table would fail for every table; the schema pull leaves each one exactly as the mirror
 * has it (or absent), and the engine reports it failed every cycle, as it does a name outside
 * the API's rule (name-rule.ts). `skip`: tables refused already.
 */
export function tooWideTables(workspace: Workspace, filter: TableFilter, dialect: DialectName, skip: ReadonlySet<string>): RefusedTable[] {
  const d = DIALECTS[dialect];
  const included = compileTableFilter(filter);
  const refused: RefusedTable[] = [];
  for (const module of workspace.modules) {
    for (const table of module.tables) {
      if (skip.has(table.id) || !included(module.name, table.name) || !table.fields) continue;
      const columns = table.fields.length + SYSTEM_COLUMNS.length;
      const viewColumns = viewColumnCount(table.fields.map((f) => f.type), d);
      const problem = columns > d.naming.maxTableColumns
        ? `${table.fields.length} fields, and a ${dialect} table holds at most ${d.naming.maxTableColumns - SYSTEM_COLUMNS.length} besides wsmirror's own columns`
        : viewColumns > d.naming.maxViewColumns
          ? `a readable view of ${viewColumns} columns (choice, multi and reference fields show two, appointments three), and ${dialect} shows at most ${d.naming.maxViewColumns}`
          : undefined;
      if (problem === undefined) continue;
      refused.push(refusal(module.name, table, 'MIRROR_LIMIT', (label) =>
        `table ${label} has ${problem}; the table is not mirrored (leave it out with tables.exclude, or split it upstream)`));
    }
  }
  return refused;
}
