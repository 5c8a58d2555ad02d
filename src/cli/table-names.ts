import { UsageError } from '../errors.ts';
import { tableLabel } from '../mirror/catalog.ts';
import type { MirrorTable } from '../mirror/index.ts';

/**
 * The mirrored tables named on a command line, as `module.table` or by SQL name; all of them
 * when none is named. An unknown name is a usage error listing the known ones.
 */
export function tablesNamed(tables: readonly MirrorTable[], names: readonly string[]): MirrorTable[] {
  if (names.length === 0) return [...tables];
  const out = new Map<string, MirrorTable>();
  for (const name of names) {
    const table = tables.find((t) => tableLabel(t) === name || t.sqlName === name);
    if (!table) {
      const known = tables.map((t) => tableLabel(t)).sort();
      throw new UsageError(`no mirrored table ${JSON.stringify(name)}: name one as module.table or by its SQL name` +
        (known.length === 0 ? ' (no table is mirrored yet: run wsmirror sync)' : ` (${known.join(', ')})`));
    }
    out.set(table.tableId, table);
  }
  return [...out.values()];
}
