import { requestsWritten } from '../../client/index.ts';
import { tableLabel, type Catalog } from '../../mirror/catalog.ts';
import type { Mirror } from '../../mirror/mirror.ts';
import type { EditOutcome, MirrorOutbox, PendingEdit } from '../../mirror/outbox.ts';
import type { SyncLogger } from '../observer.ts';
import type { SyncOptions } from '../sync-options.ts';
import type { Upstream } from '../upstream.ts';
import { rowKey } from '../../mirror/local-row-wait.ts';
import { pushTargets, waitsFor, type PushTarget } from './push-targets.ts';
import { settleOutcomes, type PushReport } from './settle-outcomes.ts';
import { pushTableEdits } from './table-push.ts';

export type { PushReport } from './settle-outcomes.ts';

export function emptyPushReport(): PushReport {
  return { pushed: 0, failed: 0, conflict: 0, retry: 0, waiting: 0, discarded: 0, unsettled: 0 };
}

/** What the push needs of the mirror. */
export type PushMirror = Pick<Mirror, 'readCatalog' | 'applyRows' | 'preferredPushRoundRecords'> & MirrorOutbox;

export interface PushContext {
  readonly client: Upstream;
  readonly mirror: PushMirror;
  readonly options: SyncOptions;
  readonly logger: SyncLogger;
  readonly signal?: AbortSignal;
  /** Milliseconds since the epoch; tests move time. */
  readonly now?: () => number;
}

/**
 * The push step, after the schema pull of every cycle (DESIGN §4.1): sends the outbox's pending edits upstream
 * and records what became of each. Works in rounds of at most `pushRoundRecords` records (by
 * default the mirror's `preferredPushRoundRecords`): read the due edits, push them table by
 * table, settle each table's outcomes in one mirror transaction. Unless a round creates records,
 * the next round is read while its requests are out, and it is settled while the next round's
 * first request is out: the daemon's reading and settling overlap upstream's work instead of
 * adding to it. An edit that references a row created locally and not yet upstream waits for a
 * later round, when that row has its upstream id; one that references a row created upstream
 * before the reference was set (an application kept its temporary id) is pointed at that record,
 * and goes in the next round. Ends when nothing is due or a round settles nothing; a failure
 * that would hit every request (401, 403; upstream unreachable, timing out, failing or throttling
 * once the client has retried: push-failure.ts) stops it after settling what is done, and the
 * push fails with it: edits keep coming in while upstream is down, and their rounds would
 * otherwise go on until it is back.
 * `catalog`: the mirror's, when the caller has just read it. `report` is counted into as edits
 * settle: a push that fails leaves in it what it did before.
 */
export async function pushOutbox(ctx: PushContext, catalog?: Catalog, report: PushReport = emptyPushReport()): Promise<PushReport> {
  const now = ctx.now ?? Date.now;
  catalog ??= await ctx.mirror.readCatalog();
  const targets = pushTargets(catalog, ctx.options);
  // The edits of tables a catalog migration held back wait for it (their columns are as an older
  // version made them), those of tables whose SQL table is missing wait for its resync, and those
  // of tables carrying a trigger of another role for its drop (foreign-trigger-tables.ts).
  const heldTables = [...catalog.unmigrated, ...catalog.missing, ...catalog.foreignTriggers.map((t) => t.tableId)];
  const roundRecords = ctx.options.pushRoundRecords ?? ctx.mirror.preferredPushRoundRecords;
  /** Edits whose outcome could not be learnt this push: not looked at again until the next. */
  const held = new Set<string>();
  /** Edits of the last round that wait for a row inserted here to be created upstream. */
  let waiting: Waiting[] = [];
  /** Of the rows they wait for, those without an insert entry: none will be created from here. */
  let uncreated = new Set<string>();
  /** Rows created upstream already whose references this push pointed at the record (`followCreatedRows`). */
  const followed = new Map<string, number>();
  /** Rows inserted here whose delete this push settled: deleted before their create went upstream (or as it did). */
  const deletedHere = new Set<string>();
  const readDue = (skip: number, after?: number) =>
    ctx.mirror.readPendingEdits({
      now: new Date(now()).toISOString(), limit: roundRecords + skip, ...(after !== undefined ? { after } : {}),
      ...(heldTables.length > 0 ? { exceptTables: heldTables } : {}),
    });
  /** The next round's edits, read while this round's requests were out. */
  let nextRound: PendingEdit[] | undefined;
  /** The last round's outcomes, settled while the next round's first request is out. */
  let deferred: EditOutcome[] | undefined;
  try {
    for (;;) {
      waiting = [];
      ctx.signal?.throwIfAborted();
      const due = nextRound ?? await readDue(held.size);
      nextRound = undefined;
      const fresh = (held.size === 0 ? due : due.filter((e) => !held.has(rowKey(e)))).slice(0, roundRecords);
      if (fresh.length === 0) break;
      for (const e of fresh) if (e.operation === 'delete' && e.recordId < 0) deletedHere.add(rowKey(e));
      // The next round may be read, and this one settled, while requests are out only when this
      // round creates no record: settling a create rewrites the temporary id in other rows, which
      // a read or a send made before it would miss.
      const overlapNext = fresh.length === roundRecords && !fresh.some((e) => e.operation === 'create');
      // Entries that cannot be sent are failed at once, with why; an edit left without entries
      // has nothing to send.
      const unsendable = fresh.flatMap((e) => e.unsendable.map((u): EditOutcome => ({ kind: 'failed', entryIds: u.entryIds, message: u.message })));
      await settle(ctx, unsendable, report);
      let settledThisRound = unsendable.length;
      const groups = [...groupByTable(fresh.filter((e) => e.entryIds.length > 0))];
      for (const [index, [tableId, edits]] of groups.entries()) {
        const target = targets.get(tableId);
        if (target === undefined) {
          const outcomes = edits.map((e): EditOutcome => ({ kind: 'failed', entryIds: e.entryIds, message: `table ${tableId} is no longer mirrored` }));
          await settle(ctx, outcomes, report);
          settledThisRound += outcomes.length;
          continue;
        }
        const ready: PendingEdit[] = [];
        for (const edit of edits) {
          const blocker = waitsFor(edit, target);
          if (blocker !== undefined) waiting.push({ edit, blocker });
          else ready.push(edit);
        }
        if (ready.length === 0) continue;
        const pushing = pushTableEdits(
          {
            upstream: ctx.client,
            batch: { maxBytes: ctx.options.pushBatchBytes, maxItems: ctx.options.pushBatchRecords },
            inFlight: ctx.options.pushRequestsInFlight,
            retry: { baseMs: ctx.options.pushRetryBaseMs, maxMs: ctx.options.pushRetryMaxMs },
            lookbackMs: ctx.options.lookbackMs,
            createSettleMs: ctx.options.createSettleMs,
            now,
            boundCreatedIds: (createdIds) => ctx.mirror.boundCreatedIds(tableId, createdIds),
            markSending: (creates) => ctx.mirror.markSending(creates, new Date(now()).toISOString()),
            baseValues: (recordIds) => ctx.mirror.readBaseValues(tableId, recordIds),
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          },
          target,
          ready,
        );
        // Once the first request is on the wire, the daemon's own work runs while upstream works:
        // settling the last round, then reading the records that follow this round in capture
        // order (its own entries are not settled yet, so a plain read would return them again).
        const readNext = overlapNext && index === groups.length - 1;
        const previous = deferred;
        deferred = undefined;
        const alongside = previous !== undefined || readNext
          ? requestsWritten().then(async () => {
            if (previous !== undefined) await settle(ctx, previous, report);
            return readNext ? readDue(held.size, Math.max(...fresh.map((e) => e.firstDueEntryId))) : undefined;
          }).then((value) => ({ value }), (error: unknown) => ({ error }))
          : undefined;
        const result = await pushing;
        // Finished before this round settles, so it never runs inside the settling transaction.
        const besides = alongside === undefined ? undefined : await alongside;
        for (const edit of result.unsettled) held.add(rowKey(edit));
        report.unsettled += result.unsettled.length;
        if (readNext && result.restore.length === 0 && result.stop === undefined) deferred = result.outcomes;
        else await settle(ctx, result.outcomes, report);
        if (result.restore.length > 0) await restoreFromUpstream(ctx, target, result.restore);
        settledThisRound += result.outcomes.length;
        if (result.stop !== undefined) throw result.stop;
        // A failed settle or read surfaces once this round's outcomes are recorded (or deferred,
        // and then settled on the way out).
        if (besides !== undefined) nextRound = unwrap(besides);
      }
      if (settledThisRound > 0) continue;
      if (waiting.length === 0) break;
      uncreated = await withoutInsert(ctx, waiting);
      // A reference set to the temporary id of a row created upstream since: it is pointed at
      // that record, and the next round sends it (the rounds read before that hold the old id).
      const unknown = [...new Map(waiting.filter(({ blocker }) => uncreated.has(rowKey(blocker)) && !followed.has(rowKey(blocker)))
        .map(({ blocker }) => [rowKey(blocker), blocker])).values()];
      const created = unknown.length > 0 ? await ctx.mirror.followCreatedRows(unknown) : [];
      for (const row of created) followed.set(rowKey({ tableId: row.tableId, recordId: row.tempId }), row.createdId);
      if (created.length === 0) break;
      nextRound = undefined;
    }
  } finally {
    // Whatever ends the push, what was sent is recorded.
    const last = deferred;
    deferred = undefined;
    if (last !== undefined) await settle(ctx, last, report);
  }
  // Edits still waiting for a row whose create failed or is not due. A wait is no attempt: they
  // are due with that create's next try when it backs off, and at once when it is made (the
  // settle of the create clears the wait); otherwise, looked at again after the longest backoff,
  // so that a round full of them never holds back the edits behind them.
  if (waiting.length > 0) {
    const labels = new Map(catalog.tables.map((t) => [t.tableId, tableLabel(t)]));
    const at = now();
    // A row without an insert entry will never be created from here, and what waits for it
    // fails, naming it: created already (where following it did not reach the reference: the
    // values a row's insert entry kept), deleted here first, or not at all (its insert was
    // discarded, or the id was typed in).
    const outcomes = waiting.map(({ edit, blocker }): EditOutcome => (uncreated.has(rowKey(blocker)) ? {
      kind: 'failed',
      entryIds: edit.entryIds,
      message: uncreatedMessage(blocker, labels.get(blocker.tableId) ?? blocker.tableId, followed.get(rowKey(blocker)), deletedHere.has(rowKey(blocker))),
    } : {
      kind: 'waiting',
      entryIds: edit.entryIds,
      message: `${edit.recordId === blocker.recordId && edit.tableId === blocker.tableId ? 'an edit of' : 'references'} row ${blocker.recordId} of ${labels.get(blocker.tableId) ?? blocker.tableId}, `
        + 'inserted here and not created upstream yet (see its insert in wsmirror outbox); sent once it is',
      blocker,
      now: new Date(at).toISOString(),
      nextAttemptAt: new Date(at + ctx.options.pushRetryMaxMs).toISOString(),
    }));
    await ctx.mirror.settleEdits(outcomes);
    for (const outcome of outcomes) report[outcome.kind === 'failed' ? 'failed' : 'waiting'] += 1;
  }
  if (report.pushed + report.failed + report.conflict + report.retry + report.waiting + report.discarded + report.unsettled > 0) {
    ctx.logger.info({ ...report }, 'outbox pushed');
  }
  return report;
}

type Waiting = { edit: PendingEdit; blocker: { tableId: string; recordId: number } };

/** The rows waited for that have no insert entry in the outbox (a row's insert entry has minus its id). */
async function withoutInsert(ctx: PushContext, waiting: readonly Waiting[]): Promise<Set<string>> {
  const inserts = new Set((await ctx.mirror.listOutbox({ entryIds: [...new Set(waiting.map(({ blocker }) => -blocker.recordId))] }))
    .filter((e) => e.operation === 'insert').map((e) => rowKey(e)));
  return new Set(waiting.map(({ blocker }) => rowKey(blocker)).filter((key) => !inserts.has(key)));
}

function uncreatedMessage(row: { recordId: number }, label: string, createdId: number | undefined, deleted: boolean): string {
  const fix = 'set the reference to a record upstream has, or to NULL, then wsmirror outbox retry';
  if (createdId !== undefined) return `references row ${row.recordId} of ${label}, which was created upstream as record ${createdId}: set the reference to ${createdId}, then wsmirror outbox retry`;
  if (deleted) return `references row ${row.recordId} of ${label}, which was deleted here before it was created upstream: ${fix}`;
  return `references row ${row.recordId} of ${label}, which the mirror will not create upstream `
    + `(its insert was discarded or deleted here, or the id was typed in): ${fix}`;
}

function settle(ctx: PushContext, outcomes: readonly EditOutcome[], report: PushReport): Promise<void> {
  return settleOutcomes(ctx.mirror, ctx.logger, outcomes, report);
}

/**
 * upstream-wins: the records whose local edits were dropped get upstream's values back now (a
 * pull would not re-read them: their upstream change is older than its cursor); so do records a
 * create's read-back bound to a local row (push-ledger.ts). Read after the push, so fields
 * pushed in the same batch come back as pushed.
 */
async function restoreFromUpstream(ctx: PushContext, target: PushTarget, ids: readonly number[]): Promise<void> {
  const { moduleName, tableName, tableId } = target.table;
  try {
    const records = await ctx.client.getRecordsByIds(moduleName, tableName, ids, ctx.signal ? { signal: ctx.signal } : {});
    const found = new Set(records.map((r) => Number(r.id)));
    await ctx.mirror.applyRows(tableId, { upserts: records, deletes: ids.filter((id) => !found.has(id)) });
  } catch (error) {
    ctx.logger.warn({ table: tableLabel(target.table), records: ids.length, err: error instanceof Error ? error.message : String(error) },
      'upstream values of records whose local values were dropped or bound could not be read back; the next full read of the table restores them');
  }
}

type Outcome<T> = { value: T } | { error: unknown };

function unwrap<T>(outcome: Outcome<T>): T {
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

function groupByTable(edits: readonly PendingEdit[]): Map<string, PendingEdit[]> {
  const out = new Map<string, PendingEdit[]>();
  for (const edit of edits) {
    const list = out.get(edit.tableId);
    if (list) list.push(edit);
    else out.set(edit.tableId, [edit]);
  }
  return out;
}
