import type { Option } from '../../api/field.ts';
import type { ApiRecord } from '../../api/records.ts';
import type { MirrorTable } from '../../mirror/catalog.ts';
import type { EditOutcome, PendingEdit } from '../../mirror/outbox.ts';
import { nextSince } from '../poll-window.ts';
import { classifyPushFailure } from './push-failure.ts';
import type { Upstream } from '../upstream.ts';
import { sameApiValue } from './same-value.ts';

/** Where a read-back looks: one table upstream, and how far before a send its changes are read. */
export interface ReadbackScope {
  upstream: Upstream;
  table: Pick<MirrorTable, 'moduleName' | 'tableName' | 'hasHistory'>;
  /** A stop (shutdown): the reads end at once, and what they were for is left as it is. */
  signal?: AbortSignal;
  /** Writable fields: name → type. */
  fieldTypes: ReadonlyMap<string, string>;
  /** Options of the choice and multi fields (the catalog's): name → their ids and names. */
  fieldOptions: ReadonlyMap<string, readonly Pick<Option, 'id' | 'name'>[]>;
  lookbackMs: number;
  /** How old an unanswered send must be before it is looked up (SyncOptions.createSettleMs). */
  settleMs: number;
  now: () => number;
  /** Of these record ids, those bound to a row inserted here already (settled, or by this push): never bound again. */
  alreadyBound(ids: readonly number[]): Promise<Set<number>>;
}

/** What a read-back settled, and what is left to send. */
export interface Readback<T> {
  /** Still to send: creates no record was found for, deletes of the records found. */
  send: T[];
  outcomes: EditOutcome[];
  /** Edits whose records could not be looked for (upstream unreadable): left marked, the next push looks again. */
  unsettled: PendingEdit[];
  /** Why they could not be: the caller tells whether it ends the push. */
  error?: unknown;
}

/** A create about to go out: its edit and the request body it sends. */
interface PreparedCreate {
  edit: PendingEdit;
  body: Readonly<Record<string, unknown>>;
}

/**
 * The outcome of a create sent `since` that got no answer (a timeout, a lost connection, a
 * crash): upstream may still be applying it, so it is neither looked up nor sent again until
 * the send is `settleMs` old; it stays marked as being sent until then. `attempt`: it was just
 * sent (the failure it met, `cause`, counts an attempt).
 */
export function unansweredOutcome(scope: Pick<ReadbackScope, 'settleMs'>, edit: PendingEdit, since: string, cause?: string): EditOutcome {
  const at = new Date(settleTime(scope, since)).toISOString();
  return {
    kind: 'unanswered',
    entryIds: edit.entryIds,
    message: `${cause === undefined ? '' : `${cause}; `}sent at ${since} with no answer, and upstream may still be applying it: `
      + `looked up upstream from ${at}, and sent again only if no record of it is found`,
    nextAttemptAt: at,
    attempt: cause !== undefined,
  };
}

/** When a send begun at `since` is old enough to be looked up (an unreadable time: at once). */
function settleTime({ settleMs }: Pick<ReadbackScope, 'settleMs'>, since: string): number {
  const sent = Date.parse(since);
  return Number.isNaN(sent) ? 0 : sent + settleMs;
}

/**
 * Edits marked as being sent, split into those to look up now and, as outcomes, those whose
 * send is too recent: it may still be under way upstream (a crash or a stop mid-send, an
 * earlier push whose send got no answer). `answered`: the send just got an answer (a 500), so
 * it is over, whenever it began.
 */
function dueForLookup<T>(scope: ReadbackScope, items: readonly T[], editOf: (item: T) => PendingEdit, answered: boolean): { due: T[]; outcomes: EditOutcome[] } {
  if (answered) return { due: [...items], outcomes: [] };
  const now = scope.now();
  const due: T[] = [];
  const outcomes: EditOutcome[] = [];
  for (const item of items) {
    const edit = editOf(item);
    if (settleTime(scope, edit.sendingSince!) <= now) due.push(item);
    else outcomes.push(unansweredOutcome(scope, edit, edit.sendingSince!));
  }
  return { due, outcomes };
}

/**
 * Creates whose earlier send was never acknowledged (a crash, or an answer lost on the way):
 * bound to the records that send made, if it made them; sent again otherwise. A send that may
 * still be under way upstream is left as it is until it is old enough (`unansweredOutcome`),
 * unless `answered` says the send got an answer.
 */
export async function reconcileCreates<T extends PreparedCreate>(scope: ReadbackScope, creates: readonly T[], answered = false): Promise<Readback<T>> {
  const marked = creates.filter((p) => p.edit.sendingSince !== null);
  if (marked.length === 0) return { send: [...creates], outcomes: [], unsettled: [] };
  const { due: unsure, outcomes } = dueForLookup(scope, marked, (p) => p.edit, answered);
  const fresh = creates.filter((p) => p.edit.sendingSince === null);
  if (unsure.length === 0) return { send: fresh, outcomes, unsettled: [] };
  let found: Map<number, number>;
  try {
    found = await findCreatedRecords(scope,
      // Recognised by what was sent: the row may have been edited since.
      unsure.map((p) => ({ recordId: p.edit.recordId, since: p.edit.sendingSince!, body: p.edit.sentBody ?? p.body })));
  } catch (error) {
    // Cannot tell whether they exist: leave them marked, the next push tries again.
    return { send: fresh, outcomes, unsettled: unsure.map((p) => p.edit), error };
  }
  for (const p of unsure) {
    const id = found.get(p.edit.recordId);
    // Only what that send covered is done: later edits stay, and go out as an update of the
    // record once it carries its upstream id.
    const covered = p.edit.sentEntryIds.length > 0 ? p.edit.sentEntryIds : p.edit.entryIds;
    if (id !== undefined) outcomes.push({ kind: 'pushed', entryIds: covered, createdId: id });
  }
  const lookedUp = new Set(unsure);
  return { send: creates.filter((p) => p.edit.sendingSince === null || (lookedUp.has(p) && !found.has(p.edit.recordId))), outcomes, unsettled: [] };
}

/**
 * Deletes of rows inserted here (negative ids): settled at once when their create never went
 * out; when it may have (marked as being sent), the record it made is looked for as after a
 * crash, and returned as a delete of that record; not found, the delete is settled too.
 */
export async function createdThenDeleted(scope: ReadbackScope, deletes: readonly PendingEdit[]): Promise<Readback<PendingEdit>> {
  const marked = deletes.filter((e) => e.sendingSince !== null && e.sentBody !== null);
  const outcomes: EditOutcome[] = deletes.filter((e) => !marked.includes(e)).map((edit) => ({ kind: 'pushed', entryIds: edit.entryIds }));
  // A create still perhaps under way would be missed now, and its record left upstream.
  const { due: unsure, outcomes: waiting } = dueForLookup(scope, marked, (e) => e, false);
  outcomes.push(...waiting);
  if (unsure.length === 0) return { send: [], outcomes, unsettled: [] };
  let found: Map<number, number>;
  try {
    found = await findCreatedRecords(scope, unsure.map((e) => ({ recordId: e.recordId, since: e.sendingSince!, body: e.sentBody! })));
  } catch (error) {
    // Cannot tell whether the record exists: left as it is, the next push looks again.
    return { send: [], outcomes, unsettled: unsure, error };
  }
  const send: PendingEdit[] = [];
  for (const edit of unsure) {
    const id = found.get(edit.recordId);
    if (id === undefined) outcomes.push({ kind: 'pushed', entryIds: edit.entryIds });
    else send.push({ ...edit, recordId: id });
  }
  return { send, outcomes, unsettled: [] };
}

/** A create whose earlier send may have gone through, with the body that was sent. */
interface UnsettledCreate {
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
 * together bind to distinct records; and none already bound to a row inserted here.
 */
async function findCreatedRecords(
  { upstream, table, fieldTypes, fieldOptions, lookbackMs, signal, alreadyBound }: ReadbackScope,
  sent: readonly UnsettledCreate[],
): Promise<Map<number, number>> {
  const bound = new Map<number, number>();
  if (sent.length === 0) return bound;
  // Upstream stores the option a sent name names: its id is what the record holds.
  const creates = sent.map((c) => ({ ...c, body: withOptionIds(c.body, fieldTypes, fieldOptions) }));
  const found = table.hasHistory
    ? await createdSince(upstream, table, creates, lookbackMs, signal)
    : await matchingNewest(upstream, table, fieldTypes, creates, signal);
  // A record another row inserted here became is that row's: binding it again would merge the
  // two rows into one. (A record the mirror holds as a pulled row may well be this create's own,
  // pulled before its answer came: that one is bound.)
  const taken = found.length === 0 ? new Set<number>() : await alreadyBound(found.map((c) => Number(c.id)));
  const candidates = found.filter((c) => !taken.has(Number(c.id)));
  candidates.sort((a, b) => Number(a.id) - Number(b.id));
  for (const create of [...creates].sort((a, b) => b.recordId - a.recordId)) {
    const match = candidates.find((c) => !taken.has(Number(c.id)) && matches(c, create.body));
    if (match === undefined) continue;
    taken.add(Number(match.id));
    bound.set(create.recordId, Number(match.id));
  }
  return bound;
}

/** `body` with each choice or multi value that names an option (and is no option's id: an id wins) as that option's id. */
function withOptionIds(
  body: Readonly<Record<string, unknown>>, fieldTypes: ReadbackScope['fieldTypes'], fieldOptions: ReadbackScope['fieldOptions'],
): Readonly<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...body };
  for (const [name, value] of Object.entries(body)) {
    const type = fieldTypes.get(name);
    const options = fieldOptions.get(name);
    if ((type !== 'choice' && type !== 'multi') || options === undefined) continue;
    const idOf = (v: unknown) => (typeof v !== 'string' || options.some((o) => o.id === v) ? v : options.find((o) => o.name === v)?.id ?? v);
    out[name] = Array.isArray(value) ? value.map(idOf) : idOf(value);
  }
  return out;
}

function matches(record: ApiRecord, body: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(body).every(([name, value]) => sameApiValue(record.values[name], value));
}

async function createdSince(
  upstream: Upstream,
  table: Pick<MirrorTable, 'moduleName' | 'tableName'>,
  creates: readonly UnsettledCreate[],
  lookbackMs: number,
  signal: AbortSignal | undefined,
): Promise<ApiRecord[]> {
  const earliest = creates.map((c) => c.since).sort()[0]!;
  const since = nextSince(earliest, lookbackMs);
  const ids = new Set<string>();
  const call = signal ? { signal } : {};
  for await (const page of upstream.pollRecordChanges(table.moduleName, table.tableName, { since, ...call })) {
    for (const change of page) if (change.changeType === 'create') ids.add(change.id);
  }
  if (ids.size === 0) return [];
  return upstream.getRecordsByIds(table.moduleName, table.tableName, [...ids], call);
}

async function matchingNewest(
  upstream: Upstream,
  table: Pick<MirrorTable, 'moduleName' | 'tableName'>,
  fieldTypes: ReadonlyMap<string, string>,
  creates: readonly UnsettledCreate[],
  signal: AbortSignal | undefined,
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
      page = await upstream.listRecords(table.moduleName, table.tableName, { filter, sort: '-id', limit: 100 }, signal ? { signal } : {});
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
