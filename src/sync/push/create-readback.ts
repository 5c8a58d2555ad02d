import type { ApiRecord } from '../../api/records.ts';
import type { MirrorTable } from '../../mirror/catalog.ts';
import { nextSince } from '../poll-window.ts';
import { classifyPushFailure } from './push-failure.ts';
import type { Upstream } from '../upstream.ts';
import { sameApiValue } from './same-value.ts';

/** A create whose earlier send may have gone through, with the body that was sent. */
export interface UnsettledCreate {
  recordId: number;
  /** When its send began (`sendingSince`). */
  since: string;
  body: Readonly<Record<string, unknown>>;
}

/** Field types a list filter can narrow on by equality (the rest are compared afterwards). */
const FILTERABLE = new Set(['string', 'number', 'boolean', 'date', 'timestamp', 'reference', 'choice', 'color', 'time', 'user', 'file']);

/**
 * Finds the upstream records that earlier sends of these creates made, so they are bound instead
 * of created twice (docs/sync.md, "Exactly once"). Returns local id → upstream id for each create
 * found; a create not found was not applied and is sent again.
 *
 * Candidates: on a table with history, the records whose `create` change is at or after the
 * earliest send (minus the lookback); without history, the newest records whose filterable
 * values equal the sent ones. A candidate matches a create when every value sent equals the
 * record's; each candidate binds at most one create, in id order, so identical rows created
 * together bind to distinct records.
 */
export async function findCreatedRecords(
  upstream: Upstream,
  table: Pick<MirrorTable, 'moduleName' | 'tableName' | 'hasHistory'>,
  fieldTypes: ReadonlyMap<string, string>,
  creates: readonly UnsettledCreate[],
  lookbackMs: number,
): Promise<Map<number, number>> {
  const bound = new Map<number, number>();
  if (creates.length === 0) return bound;
  const candidates = table.hasHistory
    ? await createdSince(upstream, table, creates, lookbackMs)
    : await matchingNewest(upstream, table, fieldTypes, creates);
  candidates.sort((a, b) => Number(a.id) - Number(b.id));
  const taken = new Set<string>();
  for (const create of [...creates].sort((a, b) => b.recordId - a.recordId)) {
    const found = candidates.find((c) => !taken.has(c.id) && matches(c, create.body));
    if (found === undefined) continue;
    taken.add(found.id);
    bound.set(create.recordId, Number(found.id));
  }
  return bound;
}

function matches(record: ApiRecord, body: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(body).every(([name, value]) => sameApiValue(record.values[name], value));
}

async function createdSince(
  upstream: Upstream,
  table: Pick<MirrorTable, 'moduleName' | 'tableName'>,
  creates: readonly UnsettledCreate[],
  lookbackMs: number,
): Promise<ApiRecord[]> {
  const earliest = creates.map((c) => c.since).sort()[0]!;
  const since = nextSince(earliest, lookbackMs);
  const ids = new Set<string>();
  for await (const page of upstream.pollRecordChanges(table.moduleName, table.tableName, { since })) {
    for (const change of page) if (change.changeType === 'create') ids.add(change.id);
  }
  if (ids.size === 0) return [];
  return upstream.getRecordsByIds(table.moduleName, table.tableName, [...ids]);
}

async function matchingNewest(
  upstream: Upstream,
  table: Pick<MirrorTable, 'moduleName' | 'tableName'>,
  fieldTypes: ReadonlyMap<string, string>,
  creates: readonly UnsettledCreate[],
): Promise<ApiRecord[]> {
  const byId = new Map<string, ApiRecord>();
  for (const create of creates) {
    const filter: Record<string, string | number | boolean> = {};
    for (const [name, value] of Object.entries(create.body)) {
      const scalar = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
      if (scalar && FILTERABLE.has(fieldTypes.get(name) ?? '')) filter[name] = value;
    }
    let page;
    try {
      page = await upstream.listRecords(table.moduleName, table.tableName, { filter, sort: '-id', limit: 100 });
    } catch (error) {
      // Upstream refuses a value of the body even as a filter (a date that is none): it refused
      // the create too, so no record holds it; the create is sent again, and refused on its own.
      if (classifyPushFailure(error).kind === 'rejected') continue;
      throw error;
    }
    for (const record of page.data) byId.set(record.id, record);
  }
  return [...byId.values()];
}
