import type { Db } from './db.ts';

/**
 * The partial indexes made per table on first use (record-statements.ts, change-log.ts): their
 * names, and their removal when what they index goes away. Table keys start at 1 again after a
 * reset, so an index left behind would serve a later table of the same key, or slow its writes down.
 */
const PREFIX = { records: 'records_of_t', changes: 'record_changes_of_t', unique: 'records_unique_t' } as const;

export function recordsIndexName(tableKey: number): string {
  return `${PREFIX.records}${tableKey}`;
}

export function recordChangesIndexName(tableKey: number): string {
  return `${PREFIX.changes}${tableKey}`;
}

export function uniqueIndexName(tableKey: number, fieldId: string): string {
  return `${PREFIX.unique}${tableKey}_${fieldId}`;
}

/** A deleted table, some fields of a table, or every table (reset). */
export type IndexOwner = { tableKey: number; fieldIds?: readonly string[] } | 'every table';

/**
 * Drops the per-table indexes of `owner`. Call it inside the transaction of the delete, so a
 * rolled-back delete keeps them.
 */
export function dropTableIndexes(db: Db, owner: IndexOwner): void {
  // GLOB patterns: the names hold no GLOB syntax, and `_` is literal (t1_* misses t12_f3).
  const patterns =
    owner === 'every table'
      ? Object.values(PREFIX).map((prefix) => `${prefix}*`)
      : owner.fieldIds !== undefined
        ? owner.fieldIds.map((id) => uniqueIndexName(owner.tableKey, id))
        : [recordsIndexName(owner.tableKey), recordChangesIndexName(owner.tableKey), `${uniqueIndexName(owner.tableKey, '')}*`];
  const find = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB ?`);
  for (const pattern of patterns) {
    for (const { name } of find.all(pattern) as { name: string }[]) db.prepare(`DROP INDEX "${name}"`).run();
  }
}
