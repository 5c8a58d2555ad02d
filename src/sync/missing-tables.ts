import type { Workspace } from '../api/workspace.ts';
import { tableLabel, type Catalog } from '../mirror/catalog.ts';
import { missingTableMessage } from '../mirror/missing-table.ts';
import { planSchema } from '../mirror/schema-planner.ts';
import type { TableFilter } from '../mirror/table-filter.ts';
import type { RefusedTable } from './name-rule.ts';

/**
 * Mirrored tables whose SQL table is missing (`Catalog.missing`: dropped outside wsmirror) are
 * held as the catalog has them, as refused tables are: not pulled, not pushed, not changed by a
 * schema plan, and reported failed every cycle with what to do. One that leaves the mirror
 * (deleted upstream, or left out by the table patterns) is dropped as usual: that needs no SQL table.
 */

/** The missing tables of `catalog`, refused as the engine reports them. */
export function missingRefusals(catalog: Pick<Catalog, 'tables' | 'missing'>): RefusedTable[] {
  return catalog.tables.filter((t) => catalog.missing.includes(t.tableId))
    .map((t) => ({ tableId: t.tableId, table: tableLabel(t), mode: t.mode, code: 'MIRROR', message: missingTableMessage(t) }));
}

/** The missing tables a plan holding `hold` (and them) would drop were they not held: they leave the mirror. */
export function leavingMissingTables(catalog: Catalog, workspace: Workspace, filter: TableFilter, hold: ReadonlySet<string>): Set<string> {
  const missing = new Set(catalog.missing);
  if (missing.size === 0) return new Set();
  const others = new Set([...hold].filter((id) => !missing.has(id)));
  return new Set(planSchema(catalog, workspace, filter, others).ops
    .flatMap((op) => (op.op === 'dropTable' && missing.has(op.table.tableId) ? [op.table.tableId] : [])));
}
