import { tableLabel, type Catalog } from '../mirror/catalog.ts';
import type { RefusedTable } from './name-rule.ts';

/**
 * Mirrored tables carrying a trigger wsmirror did not make (`Catalog.foreignTriggers`: a write of
 * the daemon's would run it as the daemon's role, so the mirror fails any write that fires one)
 * are held as tables whose SQL table is missing are (missing-tables.ts): not pulled, not pushed
 * (their local edits wait), not changed by a schema plan, and reported failed every cycle, naming
 * the trigger and the DROP TRIGGER to run. Else the write of one table's pull, a push settling its
 * rows or a schema change of it would fail whole, and the other tables' with it. A table leaving
 * the mirror stays held too: dropping it would take the trigger of another role with it.
 */
export function foreignTriggerRefusals(catalog: Pick<Catalog, 'tables' | 'foreignTriggers'>): RefusedTable[] {
  const messages = new Map(catalog.foreignTriggers.map((t) => [t.tableId, t.message]));
  return catalog.tables.flatMap((t) => {
    const message = messages.get(t.tableId);
    return message === undefined ? [] : [{ tableId: t.tableId, table: tableLabel(t), mode: t.mode, code: 'MIRROR' as const, message }];
  });
}
