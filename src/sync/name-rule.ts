import type * as z from 'zod';
import { fieldNameSchema, moduleNameSchema, tableNameSchema } from '../api/identifiers.ts';
import { quotedName, shownName } from '../api/shown-name.ts';
import type { Table } from '../api/table.ts';
import type { Workspace } from '../api/workspace.ts';
import { compileTableFilter, type TableFilter } from '../mirror/table-filter.ts';

/** An upstream table the mirror will not take, and why. */
export interface RefusedTable {
  tableId: string;
  /** `module.table` as upstream spells them (names that break the rule included). */
  table: string;
  /** The module's and the table's names, as upstream spells them, when its workspace answer named the table. */
  module?: string;
  name?: string;
  mode: 'history' | 'fullscan';
  /**
   * `INVALID_RESPONSE` for a name outside the rule; `SAFETY_VALVE` for a drop upstream
   * contradicts; `MIRROR_LIMIT` for a table wider than the mirror's database holds (width-rule.ts);
   * `MIRROR` for a table whose schema change (schema-pull.ts) or catalog migration (the mirror's
   * unmigrated-tables.ts) the database refused, whose SQL table is missing (missing-tables.ts) or
   * that carries a trigger of another role (foreign-trigger-tables.ts),
   * `MIRROR_LOCKED` for one whose locks other sessions held too long (schema-pull.ts).
   */
  code: 'INVALID_RESPONSE' | 'SAFETY_VALVE' | 'MIRROR_LIMIT' | 'MIRROR' | 'MIRROR_LOCKED';
  /** What is wrong: the name at fault and the rule it breaks, or the drop held back. */
  message: string;
}

/**
 * The included tables whose module, table or field names break the API's name rule (1 to 100
 * characters of `a-z`, `0-9` and `_`). Such names are not checked when the workspace answer is
 * read, so one bad table cannot stop the others; the schema pull leaves each table found here
 * exactly as the mirror has it (or absent), and the engine reports it as failed every cycle.
 */
export function refusedTables(workspace: Workspace, filter: TableFilter): RefusedTable[] {
  const included = compileTableFilter(filter);
  const refused: RefusedTable[] = [];
  for (const module of workspace.modules) {
    for (const table of module.tables) {
      if (!included(module.name, table.name)) continue;
      const problem = problemOf(moduleNameSchema, 'module', module.name)
        ?? problemOf(tableNameSchema, 'table', table.name)
        ?? (table.fields ?? []).map((f) => problemOf(fieldNameSchema, 'field', f.name)).find((p) => p !== undefined);
      if (problem === undefined) continue;
      refused.push(refusal(module.name, table, 'INVALID_RESPONSE', (label) =>
        `the workspace answer names table ${JSON.stringify(label)} with ${problem}; the table is not mirrored until upstream fixes the name`));
    }
  }
  return refused;
}

/** A table of module `moduleName` refused with `code`; `message` is given the table's `module.table`. */
export function refusal(
  moduleName: string, table: Pick<Table, 'id' | 'name' | 'hasHistory'>, code: RefusedTable['code'], message: (label: string) => string,
): RefusedTable {
  // A name outside the rule may be thousands of characters long: shown by its start.
  const label = `${shownName(moduleName)}.${shownName(table.name)}`;
  return {
    tableId: table.id, table: label, module: moduleName, name: table.name,
    mode: table.hasHistory === true ? 'history' : 'fullscan', code, message: message(label),
  };
}

function problemOf(schema: z.ZodType<string>, what: string, name: string): string | undefined {
  if (schema.safeParse(name).success) return undefined;
  return `${what} name ${quotedName(name)}, outside the API's rule: 1 to 100 characters matching ^[a-z0-9_]+$`;
}
