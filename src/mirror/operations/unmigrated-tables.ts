import { tableLabel } from '../catalog.ts';
import type { TableSchemaError } from '../errors.ts';

/**
 * Tables whose part of a catalog migration the database refused (migrate-catalog.ts): a view of a
 * user's own on their readable view, or on a column the migration converts. The rest of the
 * mirror is migrated; these are left as they were, neither pulled nor pushed, and their
 * migration is tried again at every cycle until it applies. The list is a `_wsmirror_meta` row,
 * written in the migration's transaction (migrate-catalog.ts): what it says is what the tables are.
 */
export const UNMIGRATED_KEY = 'unmigrated_tables';

/** The tables the list names (none when it is absent). */
export function parseUnmigrated(value: string | undefined): string[] {
  return value === undefined ? [] : JSON.parse(value) as string[];
}

/**
 * Why the table was left out and what to do: the database's reason names the object of the
 * user's in the way (on Postgres its DETAIL, which the driver adds to the message).
 */
export function unmigratedMessage(table: { moduleName: string; tableName: string }, error: TableSchemaError): string {
  return `the mirror refused to bring table ${tableLabel(table)} up to this wsmirror version, which leaves it as it was, neither pulled `
    + `nor pushed, until it applies: ${error.message}; drop the object that depends on it (create it again after the next sync), `
    + 'and the next cycle finishes the table';
}
