import type { ApiRecord } from '../../api/records.ts';
import type { Catalog } from '../../mirror/catalog.ts';
import { DIALECTS } from '../../mirror/dialects.ts';
import type { DialectName } from '../../mirror/dialect-name.ts';
import { couldBeTableName } from '../../mirror/naming.ts';
import type { Mirror } from '../../mirror/mirror.ts';
import type { MirrorOutbox, OutboxEntry, OutboxFilter } from '../../mirror/outbox.ts';
import { UsageError } from '../../errors.ts';
import { tableLabel } from '../sync-context.ts';
import type { Upstream } from '../upstream.ts';
import { deletedMessage } from './conflict-check.ts';

/** What `wsmirror outbox retry|discard` act on: entry ids and/or tables (`module.table`). */
export interface OutboxSelection {
  entryIds?: readonly number[];
  tables?: readonly string[];
}

type AdminMirror = Pick<Mirror, 'dialect' | 'readCatalog' | 'applyRows' | 'outboxSummary' | 'waitingEdits'> & MirrorOutbox;

/** An outbox entry as `wsmirror outbox` lists it. */
export type ListedEntry = OutboxEntry & {
  /** `module.table`; the SQL name its entries keep when it is no longer mirrored. */
  table: string;
  /** A pending entry that waits for a row inserted here to be created upstream: that row. */
  waitsFor: { table: string; tableId: string; recordId: number } | null;
};

/**
 * The mirror's filter for a selection. A mirrored table is named `module.table` or by its SQL
 * name. One no longer mirrored (deleted upstream, or left out by the table patterns), whose
 * catalog row is gone, by the SQL name its entries keep, the `module.table` it had (when that
 * name gave the SQL name), or its table id. An unknown name is a usage error naming it.
 */
export async function outboxFilter(
  mirror: Pick<AdminMirror, 'dialect' | 'outboxSummary'>, catalog: Pick<Catalog, 'tables'>, selection: OutboxSelection,
): Promise<Omit<OutboxFilter, 'statuses'>> {
  const filter: { entryIds?: readonly number[]; tableIds?: readonly string[] } = {};
  if (selection.entryIds !== undefined && selection.entryIds.length > 0) filter.entryIds = selection.entryIds;
  if (selection.tables !== undefined && selection.tables.length > 0) {
    const mirrored = new Set(catalog.tables.map((t) => t.tableId));
    const unmirrored = (await mirror.outboxSummary()).filter((c) => !mirrored.has(c.tableId));
    filter.tableIds = [...new Set(selection.tables.flatMap((name) => {
      const table = catalog.tables.find((t) => tableLabel(t) === name || t.sqlName === name);
      if (table !== undefined) return [table.tableId];
      const ids = unmirrored.filter((c) => c.tableId === name || c.sqlTable === name || wasNamed(mirror.dialect, c, name)).map((c) => c.tableId);
      if (ids.length > 0) return ids;
      throw new UsageError(`no mirrored table ${JSON.stringify(name)} (give module.table or the SQL name, as wsmirror status lists them; for a table no longer mirrored, the SQL name wsmirror outbox shows)`);
    }))];
  }
  return filter;
}

/** Whether `module.table` (split at any dot) is the name a table no longer mirrored had. */
function wasNamed(dialect: DialectName, entries: { tableId: string; sqlTable: string }, name: string): boolean {
  for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
    if (couldBeTableName(DIALECTS[dialect].naming, entries.sqlTable, entries.tableId, name.slice(0, dot), name.slice(dot + 1))) return true;
  }
  return false;
}

/**
 * Outbox entries for listing, table labels resolved (`module.table`; the SQL name its entries keep
 * when no longer mirrored), each pending one with the row inserted here it waits for, if any.
 */
export async function listOutbox(mirror: AdminMirror, filter: OutboxFilter): Promise<ListedEntry[]> {
  const catalog = await mirror.readCatalog();
  const labels = new Map(catalog.tables.map((t) => [t.tableId, tableLabel(t)]));
  const entries = await mirror.listOutbox(filter);
  const sqlTables = new Map(entries.map((e) => [e.tableId, e.sqlTable]));
  const label = (tableId: string) => labels.get(tableId) ?? sqlTables.get(tableId) ?? tableId;
  const waits = entries.some((e) => e.status === 'pending') ? await mirror.waitingEdits() : [];
  const waitsFor = new Map(waits.map((w) => [`${w.tableId}:${w.recordId}`, w.waitsFor]));
  return entries.map((e) => {
    const row = e.status === 'pending' ? waitsFor.get(`${e.tableId}:${e.recordId}`) : undefined;
    return { ...e, table: label(e.tableId), waitsFor: row === undefined ? null : { table: label(row.tableId), ...row } };
  });
}

/**
 * Failed and conflicting entries go back to pending (sent at the next cycle; the local value
 * wins, unchecked). An edit of a record deleted upstream cannot be retried (no update brings the
 * record back): named by id, the command is refused; selected by table, it is left as it is and
 * listed in `deletedUpstream`, and the table's other entries are retried.
 */
export async function retryOutbox(mirror: AdminMirror, selection: OutboxSelection): Promise<{ retried: number; deletedUpstream: number[] }> {
  const filter = await selectionFilter(mirror, await mirror.readCatalog(), selection);
  const gone = (await mirror.listOutbox({ ...filter, statuses: ['conflict'] })).filter((e) => e.lastError === deletedMessage(e.recordId));
  const named = new Set(selection.entryIds ?? []);
  const goneNamed = gone.filter((e) => named.has(e.entryId));
  if (goneNamed.length > 0) {
    const records = [...new Set(goneNamed.map((e) => e.recordId))].join(', ');
    throw new UsageError(
      `record ${records} was deleted upstream: a retry cannot bring ${goneNamed.length === 1 ? 'it' : 'them'} back. ` +
        `Discard the edit (wsmirror outbox discard ${goneNamed.map((e) => e.entryId).join(' ')}); to have the record again, INSERT the row anew (a new record is created)`,
    );
  }
  if (gone.length === 0) return { retried: await mirror.retryOutbox(filter), deletedUpstream: [] };
  const left = new Set(gone.map((e) => e.entryId));
  const entryIds = (await mirror.listOutbox({ ...filter, statuses: ['failed', 'conflict'] })).map((e) => e.entryId).filter((id) => !left.has(id));
  const retried = entryIds.length === 0 ? 0 : await mirror.retryOutbox({ entryIds });
  return { retried, deletedUpstream: [...left] };
}

/**
 * Drops local edits and gives the mirror upstream's version of their records back: the
 * records are read from upstream FIRST (an unreachable upstream discards nothing), then the
 * entries are deleted and the records written. A row inserted locally and never created upstream
 * goes with its entries. Returns how many records were restored and local rows removed.
 */
export async function discardOutbox(
  mirror: AdminMirror, upstream: Upstream, selection: OutboxSelection,
): Promise<{ entries: number; records: number; localRows: number }> {
  const catalog = await mirror.readCatalog();
  const filter = await selectionFilter(mirror, catalog, selection);
  const entries = await mirror.listOutbox(filter);
  if (entries.length === 0) return { entries: 0, records: 0, localRows: 0 };
  // Negative ids: rows inserted locally, which the mirror's discard deletes itself.
  const localRows = new Set(entries.filter((e) => e.recordId < 0).map((e) => `${e.tableId}:${e.recordId}`)).size;
  const byTable = new Map<string, Set<number>>();
  for (const e of entries) {
    const ids = byTable.get(e.tableId) ?? new Set<number>();
    ids.add(e.recordId);
    byTable.set(e.tableId, ids);
  }
  const restore = new Map<string, { upserts: ApiRecord[]; deletes: number[] }>();
  for (const [tableId, ids] of byTable) {
    const table = catalog.tables.find((t) => t.tableId === tableId);
    // No longer mirrored, or its SQL table missing: nothing to restore into.
    if (table === undefined || catalog.missing.includes(tableId)) continue;
    const upstreamIds = [...ids].filter((id) => id > 0);
    if (upstreamIds.length === 0) continue;
    const found = await upstream.getRecordsByIds(table.moduleName, table.tableName, upstreamIds);
    const present = new Set(found.map((r) => Number(r.id)));
    restore.set(tableId, { upserts: found, deletes: upstreamIds.filter((id) => !present.has(id)) });
  }
  await mirror.discardOutbox({ entryIds: entries.map((e) => e.entryId) });
  let records = 0;
  for (const [tableId, batch] of restore) {
    await mirror.applyRows(tableId, batch);
    records += batch.upserts.length + batch.deletes.length;
  }
  return { entries: entries.length, records, localRows };
}

/**
 * The filter of a retry or discard: something must be named, and every id named must be in the
 * outbox. An id that is not (mistyped, or its entry pushed or discarded since) refuses the whole
 * command before anything changes, so that a typo is not taken for "done".
 */
async function selectionFilter(
  mirror: AdminMirror, catalog: Pick<Catalog, 'tables'>, selection: OutboxSelection,
): Promise<Omit<OutboxFilter, 'statuses'>> {
  if ((selection.entryIds?.length ?? 0) === 0 && (selection.tables?.length ?? 0) === 0) {
    throw new UsageError('name the entries (ids as wsmirror outbox lists them) or --table module.table');
  }
  const filter = await outboxFilter(mirror, catalog, selection);
  if (filter.entryIds !== undefined) {
    const present = new Set((await mirror.listOutbox({ entryIds: filter.entryIds })).map((e) => e.entryId));
    const missing = [...new Set(filter.entryIds)].filter((id) => !present.has(id));
    if (missing.length > 0) {
      throw new UsageError(`entry ids not in the outbox: ${missing.join(', ')} (wsmirror outbox lists the entries; a pushed or discarded entry leaves it); nothing was changed`);
    }
  }
  return filter;
}
