import { tableLabel, type MirrorTable } from './catalog.ts';

type NamedTable = Pick<MirrorTable, 'moduleName' | 'tableName' | 'sqlName'>;

/**
 * Why a mirrored table whose SQL table is missing (`Catalog.missing`: dropped outside wsmirror)
 * is neither pulled nor pushed, and what brings it back: `wsmirror status` shows it beside the
 * table, a cycle reports it as the table's error, `wsmirror check` as a problem of the mirror.
 */
export function missingTableReason(table: NamedTable): string {
  const label = tableLabel(table);
  return `its SQL table ${table.sqlName} is missing from the mirror (dropped outside wsmirror); the table is neither pulled `
    + `nor pushed, and its local edits wait in the outbox. wsmirror resync ${label} makes it again and reads its records from upstream `
    + '(rows inserted here and not created upstream yet were lost with it), or leave it out with tables.exclude';
}

/** The reason as a line of its own, naming the table. */
export function missingTableMessage(table: NamedTable): string {
  return `table ${tableLabel(table)}: ${missingTableReason(table)}`;
}
