import { tableLabel, type MirrorTable } from './catalog.ts';

/**
 * Why a mirrored table whose SQL table is missing (`Catalog.missing`: dropped outside wsmirror)
 * is neither pulled nor pushed, and what brings it back: `wsmirror status` shows it as the
 * table's error, `wsmirror check` as a problem of the mirror.
 */
export function missingTableMessage(table: Pick<MirrorTable, 'moduleName' | 'tableName' | 'sqlName'>): string {
  const label = tableLabel(table);
  return `table ${label}: its SQL table ${table.sqlName} is missing from the mirror (dropped outside wsmirror); the table is neither pulled `
    + `nor pushed, and its local edits wait in the outbox. wsmirror resync ${label} makes it again and reads its records from upstream `
    + '(rows inserted here and not created upstream yet were lost with it), or leave it out with tables.exclude';
}
