import { catalogTablesOf } from '../catalog-ddl.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { assertOpen } from '../mirror-context.ts';
import { readCatalog } from './read-catalog.ts';

/** What would keep the daemon from writing this mirror: its catalog tables and every mirrored table. */
export async function accessProblems(ctx: MirrorContext): Promise<string[]> {
  assertOpen(ctx);
  const catalog = await readCatalog(ctx);
  const tables = [...catalogTablesOf(ctx.dialect).map((t) => t.name), ...catalog.tables.map((t) => t.sqlName)];
  return ctx.driver.accessProblems(tables);
}
