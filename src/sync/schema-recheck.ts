import type { SchemaChange } from '../api/changes.ts';
import { backfillCursorKey, recordCursorKey, scanCursorKey, type Catalog, type MirrorTable } from '../mirror/catalog.ts';
import { tableLabel, type SyncContext } from './sync-context.ts';

/**
 * A record pull checks the keys of what it reads against its field list (schema-drift.ts), but a
 * schema change that keeps the names (a field deleted and made again under its name and type, two
 * fields swapping names) passes that check: the values land in the wrong columns, and the next
 * schema pull moves or drops those columns under them. Tables are read one after the other, so
 * minutes may pass between the cycle's schema pull and a table's pull.
 *
 * So after the tables are read, the schema change log is polled once more from where the cycle's
 * schema poll began: a change it did not see names a field, table or module of the tables whose
 * pulls read across it. Those pulls are undone where it matters (`undoPull`): their cursors and
 * state go back to what they were when the pulls began, and they are read again once the schema
 * has been pulled again. An idle cycle pays one request.
 */

/** Identifies one schema change of the log: a poll remembers those it read. */
export function schemaChangeKey(change: SchemaChange): string {
  return `${change.kind} ${change.id} ${change.action} ${change.changedAt}`;
}

/** Where a schema poll began and what it read: what a later poll of the same window need not report again. */
export interface SchemaPollWindow {
  since: string;
  seen: ReadonlySet<string>;
}

/** The ids of the tables among `pulled` whose schema changed in the log since `window`, past what it saw. */
export async function tablesChangedSince(
  ctx: SyncContext, window: SchemaPollWindow, catalog: Catalog, pulled: readonly MirrorTable[],
): Promise<Set<string>> {
  const changed = new Set<string>();
  if (pulled.length === 0) return changed;
  const fieldTable = new Map(catalog.fields.map((f) => [f.fieldId, f.tableId]));
  const poll = ctx.client.pollSchemaChanges({ since: window.since, pageSize: ctx.options.pageSize, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const ids = new Set<string>();
  for await (const page of poll) {
    for (const change of page) if (!window.seen.has(schemaChangeKey(change))) ids.add(change.id);
  }
  // A field made since is not known here: it changes the records' keys, which the pull checks.
  for (const table of pulled) {
    if (ids.has(table.tableId) || ids.has(table.moduleId)) changed.add(table.tableId);
  }
  for (const id of ids) {
    const tableId = fieldTable.get(id);
    if (tableId !== undefined && pulled.some((t) => t.tableId === tableId)) changed.add(tableId);
  }
  return changed;
}

/**
 * What a table's pull changes of its catalog row, taken as the pull begins: the pull's own writes
 * also change the catalog objects the cycle holds.
 */
export type PullStart = Pick<MirrorTable, 'state' | 'lastPullAt' | 'currentAsOf'>;

export function pullStartOf(table: MirrorTable): PullStart {
  return { state: table.state, lastPullAt: table.lastPullAt, currentAsOf: table.currentAsOf };
}

/**
 * Puts a table's pull cursors, state, last pull and the time it is current as of back to
 * `cursors` and `start` as its pull began, in one transaction: a history pull polls its
 * changes again from the same point, a backfill starts over, a scan is due and has no checkpoint
 * of this cycle to resume, and `wsmirror status` and the lag metric show the table as current as
 * of its pull before, not of the one undone. Its rows stay until the pull that reads them again.
 */
export async function undoPull(ctx: SyncContext, table: MirrorTable, start: PullStart, cursors: ReadonlyMap<string, string>): Promise<void> {
  const keys = [recordCursorKey(table.tableId), backfillCursorKey(table.tableId), scanCursorKey(table.tableId)];
  await ctx.mirror.applyRows(table.tableId, {
    cursors: Object.fromEntries(keys.map((k) => [k, cursors.get(k) ?? null])),
    state: start.state,
    // A scan undone is due again, not only when the next one would have been.
    undone: { lastPullAt: start.lastPullAt, currentAsOf: start.currentAsOf },
  });
  ctx.observer.tablePullUndone?.(tableLabel(table), {
    currentAsOf: start.currentAsOf === null ? null : new Date(start.currentAsOf),
    lastPullAt: start.lastPullAt === null ? null : new Date(start.lastPullAt),
  });
}
