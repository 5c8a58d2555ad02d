import { catalogTablesOf } from '../catalog-ddl.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { assertOpen } from '../mirror-context.ts';
import { missingTableMessage } from '../missing-table.ts';
import { readCatalog } from './read-catalog.ts';

/**
 * What would keep the daemon from writing this mirror: its catalog tables and every mirrored
 * table; a mirrored table whose SQL table is missing is named, with what to do. A missing catalog
 * table (one this version adds to a mirror an older one made) is made by the next open for writing.
 */
export async function accessProblems(ctx: MirrorContext): Promise<string[]> {
  assertOpen(ctx);
  const catalog = await readCatalog(ctx);
  const present = catalog.tables.filter((t) => !catalog.missing.includes(t.tableId));
  const missing = catalog.tables.filter((t) => catalog.missing.includes(t.tableId)).map(missingTableMessage);
  return [...await ctx.driver.accessProblems(present.map((t) => t.sqlName), catalogTablesOf(ctx.dialect).map((t) => t.name)), ...missing];
}
