import type { Table } from '../api/table.ts';
import type { Workspace } from '../api/workspace.ts';
import type { MirrorTable } from '../mirror/catalog.ts';
import { tableLabel } from '../mirror/catalog.ts';
import type { SchemaPlan } from '../mirror/schema-planner.ts';
import { UpstreamError } from '../errors.ts';
import type { RefusedTable } from './name-rule.ts';
import type { Upstream } from './upstream.ts';

/** A table the plan would drop, or drop fields of, because the workspace answer left it or them out. */
interface DropToCheck {
  table: MirrorTable;
  /** Where upstream serves the table now: the workspace's names when it still lists the table. */
  moduleName: string;
  tableName: string;
  /** The fields left out; none when the whole table is. */
  fieldIds: Set<string>;
  fieldNames: string[];
}

/**
 * The schema's safety valve (DESIGN §4.10), as `sync.maxDeleteShare` is the records': one
 * workspace answer that leaves out a table or field would drop it and its values, and a faulty
 * or partial answer would do so as readily as a real delete. So each table the plan drops, or
 * drops fields of, because the answer left it out is asked for on its own (`GET …/tables/{name}`,
 * which includes its fields). A 404, or the name now answering another table, confirms the drop;
 * the same table still served, with the fields left out, contradicts it. The tables whose drops
 * upstream contradicts are returned, for the schema pull to hold exactly as the mirror has them
 * and report until the two answers agree. Tables the table filter left out are not asked for.
 */
export async function unconfirmedDrops(
  upstream: Pick<Upstream, 'getTable'>, workspace: Workspace, plan: SchemaPlan, tables: readonly MirrorTable[],
): Promise<RefusedTable[]> {
  const refused: RefusedTable[] = [];
  for (const check of dropsToCheck(workspace, plan, tables)) {
    const served = await servedTable(upstream, check.moduleName, check.tableName);
    if (!contradicts(served, check)) continue;
    const where = `${check.moduleName}.${check.tableName}`;
    const left = check.fieldNames.length === 0
      ? `table ${where}, but upstream still serves it`
      : `field${check.fieldNames.length === 1 ? '' : 's'} ${check.fieldNames.join(', ')} of table ${where}, ` +
        'but upstream still serves the table with them (or serves another table under its name)';
    refused.push({
      tableId: check.table.tableId,
      table: tableLabel(check.table),
      mode: check.table.mode,
      code: 'SAFETY_VALVE',
      message: `the workspace answer leaves out ${left}: nothing was dropped, and the table is held as ` +
        'mirrored until the two answers agree',
    });
  }
  return refused;
}

function dropsToCheck(workspace: Workspace, plan: SchemaPlan, tables: readonly MirrorTable[]): DropToCheck[] {
  const listed = new Map<string, { moduleName: string; tableName: string }>();
  for (const module of workspace.modules) {
    for (const table of module.tables) listed.set(table.id, { moduleName: module.name, tableName: table.name });
  }
  const byId = new Map(tables.map((t) => [t.tableId, t]));
  const checks = new Map<string, DropToCheck>();
  for (const op of plan.ops) {
    if (op.op === 'dropTable') {
      // Still listed: the table filter leaves it out now, which is the configuration's call.
      if (listed.has(op.table.tableId)) continue;
      checks.set(op.table.tableId, { table: op.table, moduleName: op.table.moduleName, tableName: op.table.tableName, fieldIds: new Set(), fieldNames: [] });
    } else if (op.op === 'dropColumn') {
      const table = byId.get(op.field.tableId);
      const at = listed.get(op.field.tableId);
      if (!table || !at) continue;
      const check = checks.get(table.tableId) ?? { table, ...at, fieldIds: new Set<string>(), fieldNames: [] };
      check.fieldIds.add(op.field.fieldId);
      check.fieldNames.push(op.field.fieldName);
      checks.set(table.tableId, check);
    }
  }
  return [...checks.values()];
}

/** The table upstream serves under this name, or undefined for a 404 (table or module not found). */
async function servedTable(upstream: Pick<Upstream, 'getTable'>, moduleName: string, tableName: string): Promise<Table | undefined> {
  try {
    return await upstream.getTable(moduleName, tableName);
  } catch (error) {
    if (error instanceof UpstreamError && error.status === 404) return undefined;
    throw error;
  }
}

function contradicts(served: Table | undefined, check: DropToCheck): boolean {
  if (served === undefined) return false;
  if (check.fieldIds.size === 0) return served.id === check.table.tableId;
  // Fields left out are confirmed only by the same table, listing its fields, without them.
  if (served.id !== check.table.tableId || !Array.isArray(served.fields)) return true;
  return served.fields.some((f) => check.fieldIds.has(f.id));
}
