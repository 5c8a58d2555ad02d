import type { ApiRecord } from '../../api/records.ts';
import type { MirrorField, MirrorTable } from '../../mirror/catalog.ts';
import type { EditOutcome, PendingEdit, SentCreate } from '../../mirror/outbox.ts';
import { tableLabel } from '../sync-context.ts';
import type { Upstream } from '../upstream.ts';
import type { ConflictPolicy } from './conflict-policy.ts';
import { checkConflicts, deletedMessage } from './conflict-check.ts';
import { createdThenDeleted, reconcileCreates, type Readback, type ReadbackScope } from './create-readback.ts';
import { forEachInFlight } from './in-flight.ts';
import { sendIsolatingRejects, type IsolatedSend } from './isolate-rejects.ts';
import { sendFieldsApart } from './isolate-fields.ts';
import { chunkByPayload } from './payload-chunks.ts';
import { classifyPushFailure, endsPush, nextAttemptAt, type PushFailure, type RetrySchedule } from './push-failure.ts';
import { settableUpdates } from './settable-updates.ts';
import { toRequestValue, updateRecord } from './write-shape.ts';

/** One mirrored table as the push sees it. */
export interface PushTarget {
  table: MirrorTable;
  /** Writable fields: name → type. */
  fieldTypes: ReadonlyMap<string, string>;
  /** Options of the writable choice and multi fields, by field name. */
  fieldOptions: ReadbackScope['fieldOptions'];
  /** The writable fields that can point at a row inserted here, by field name (mirror/local-row-wait.ts). */
  referenceFields: ReadonlyMap<string, MirrorField>;
  policy: ConflictPolicy;
}

export interface TablePushSettings {
  upstream: Upstream;
  batch: { maxBytes: number; maxItems: number };
  /** Requests of one kind (creates, updates, deletes) out at once. */
  inFlight: number;
  retry: RetrySchedule;
  lookbackMs: number;
  now: () => number;
  /** Marks creates as being sent (entries and body), committed before the request goes out. */
  markSending(creates: readonly SentCreate[]): Promise<void>;
  /** Each field's value before its earliest edit still in the outbox, by record (MirrorOutbox.readBaseValues). */
  baseValues(recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>>;
  /** A stop (shutdown): no further request goes out (a retry's wait included); what was not sent stays as it is. */
  signal?: AbortSignal;
}

export interface TablePushResult {
  outcomes: EditOutcome[];
  /** Records whose upstream values must come back into the mirror once the outcomes are settled (upstream-wins). */
  restore: number[];
  /** Edits left as they are (their outcome is unknown until the upstream can be read): not settled. */
  unsettled: PendingEdit[];
  /**
   * A failure every request would meet, which ends the push (401, 403; upstream unreachable or
   * failing after the client's retries: push-failure.ts), raised once the outcomes so far are settled.
   */
  stop?: unknown;
}

type Body = Record<string, unknown>;
interface Prepared {
  edit: PendingEdit;
  body: Body;
}

/**
 * Pushes one table's pending edits (each edit is one record's coalesced change) and says what
 * became of each: creates by POST, updates by batch PATCH, deletes by DELETE, each in batches
 * under the payload limit. See docs/mirror.md, "Writing to the mirror", for the rules.
 */
export async function pushTableEdits(
  settings: TablePushSettings,
  target: PushTarget,
  edits: readonly PendingEdit[],
): Promise<TablePushResult> {
  const result: TablePushResult = { outcomes: [], restore: [], unsettled: [] };
  const creates = edits.filter((e) => e.operation === 'create');
  const updates = edits.filter((e) => e.operation === 'update');
  const deletes = edits.filter((e) => e.operation === 'delete');
  const run = new TableRun(settings, target, result);

  // A delete of a row never created upstream: nothing to send. One whose create may have gone
  // out (a crash between its send and the answer) deletes the record that send made, if any.
  const upstreamDeletes = [...deletes.filter((e) => e.recordId > 0), ...await run.createdThenDeleted(deletes.filter((e) => e.recordId < 0))];

  const toCreate = await run.reconcileCreates(creates.map((edit) => ({ edit, body: run.body(edit, 'create') })));
  const toUpdate = await run.applyPolicy(run.settable(updates));
  if (toCreate.length + toUpdate.length + upstreamDeletes.length === 0) return result;
  // Only creates are marked before they go out: an update or delete sent again after a crash
  // gives the same record (absolute values, an already deleted record), a create would not.
  if (toCreate.length > 0) await settings.markSending(toCreate.map((p) => ({ entryIds: p.edit.entryIds, body: p.body })));

  if (toCreate.length > 0) await run.sendCreates(toCreate);
  if (toUpdate.length > 0) await run.sendUpdates(toUpdate, true);
  if (upstreamDeletes.length > 0) await run.sendDeletes(upstreamDeletes, true);
  return result;
}

class TableRun {
  readonly #s: TablePushSettings;
  readonly #t: PushTarget;
  readonly #r: TablePushResult;
  readonly #module: string;
  readonly #table: string;
  readonly #readback: ReadbackScope;
  /** Every request of the push carries the stop signal, so a stop also cuts a retry's wait short. */
  readonly #call: { signal?: AbortSignal };

  constructor(settings: TablePushSettings, target: PushTarget, result: TablePushResult) {
    this.#s = settings;
    this.#t = target;
    this.#r = result;
    this.#module = target.table.moduleName;
    this.#table = target.table.tableName;
    this.#readback = {
      upstream: settings.upstream, table: target.table, fieldTypes: target.fieldTypes, fieldOptions: target.fieldOptions, lookbackMs: settings.lookbackMs,
      ...(settings.signal ? { signal: settings.signal } : {}),
    };
    this.#call = settings.signal ? { signal: settings.signal } : {};
  }

  /** The request body of a create or update: writable fields, in the API's request shapes. */
  body(edit: PendingEdit, operation: 'create' | 'update', fields?: ReadonlySet<string>): Body {
    const body: Body = {};
    for (const [name, value] of edit.values) {
      const type = this.#t.fieldTypes.get(name);
      if (type === undefined || (fields !== undefined && !fields.has(name))) continue;
      // A create leaves empty fields out, so upstream defaults apply as for any new record.
      if (operation === 'create' && (value === null || value === undefined)) continue;
      body[name] = toRequestValue(type, value, operation);
    }
    return body;
  }

  // ---- creates ---------------------------------------------------------------------------------

  /** Creates whose earlier send was never acknowledged: bound to the records it made, or sent again (create-readback.ts). */
  async reconcileCreates(creates: Prepared[]): Promise<Prepared[]> {
    return this.#settleReadback(await reconcileCreates(this.#readback, creates), (p) => p.edit);
  }

  /** Deletes of rows inserted here: settled, or deletes of the records their create made (create-readback.ts). */
  async createdThenDeleted(deletes: readonly PendingEdit[]): Promise<PendingEdit[]> {
    return this.#settleReadback(await createdThenDeleted(this.#readback, deletes), (e) => e);
  }

  async sendCreates(creates: Prepared[]): Promise<void> {
    await this.#eachChunk(creates, async (chunk) => {
      const sentAt = new Date(this.#s.now()).toISOString();
      const sent = await sendIsolatingRejects(chunk, (batch) =>
        this.#s.upstream.createRecords(this.#module, this.#table, batch.map((p) => p.body), this.#call), this.#s.signal);
      this.#unsent(sent);
      for (const { items, result } of sent.accepted) {
        items.forEach((p, i) => {
          const id = Number(result.ids[i]);
          this.#r.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds, createdId: id });
        });
      }
      this.#rejected(sent);
      for (const { items, failure } of sent.failed) {
        if (failure.kind === 'transient' && failure.maybeApplied) {
          // The records may exist now: read back at once, as after a crash. A create is not
          // sent again after such a failure, so one failure tells nothing of upstream as a
          // whole: the read-back does, and ends the push if upstream does not answer it.
          const again = await this.reconcileCreates(items.map((p) => ({ ...p, edit: { ...p.edit, sendingSince: sentAt } })));
          this.#charge(again.map((p) => p.edit), failure);
        } else {
          this.#failure(items.map((p) => p.edit), failure);
        }
      }
    });
  }

  // ---- updates ---------------------------------------------------------------------------------

  /** The updates without the fields the API's update cannot set: those fail here (settable-updates.ts). */
  settable(updates: readonly PendingEdit[]): PendingEdit[] {
    const settable = settableUpdates(updates);
    this.#r.outcomes.push(...settable.outcomes);
    return settable.send;
  }

  /**
   * The updates to send under the table's conflict policy (conflict-check.ts): `local-wins` sends
   * them all without reading; the others read upstream's records first.
   */
  async applyPolicy(updates: readonly PendingEdit[]): Promise<Prepared[]> {
    const policy = this.#t.policy;
    if (policy === 'local-wins' || updates.length === 0) return updates.map((edit) => ({ edit, body: this.body(edit, 'update') }));
    let upstream: Map<number, ApiRecord>;
    try {
      const records = await this.#s.upstream.getRecordsByIds(this.#module, this.#table, updates.map((e) => e.recordId), this.#call);
      upstream = new Map(records.map((r) => [Number(r.id), r]));
    } catch (error) {
      this.#failure(updates, failureOf(error));
      return [];
    }
    const checked = checkConflicts(policy, updates, upstream, await this.#s.baseValues(updates.map((e) => e.recordId)));
    this.#r.outcomes.push(...checked.outcomes);
    this.#r.restore.push(...checked.restore);
    return checked.send.map(({ edit, fields }) => ({ edit, body: this.body(edit, 'update', fields) }));
  }

  async sendUpdates(updates: Prepared[], firstTry: boolean): Promise<void> {
    await this.#eachChunk(updates, async (chunk) => {
      const sent = await sendIsolatingRejects(chunk, (batch) =>
        this.#s.upstream.updateRecords(this.#module, this.#table, batch.map((p) => updateRecord(p.edit.recordId, p.body)), this.#call), this.#s.signal);
      this.#unsent(sent);
      for (const { items } of sent.accepted) for (const p of items) this.#r.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds });
      for (const { item, message } of sent.rejected) await this.#isolateFields(item, message);
      for (const { items, failure } of sent.failed) {
        if (failure.kind !== 'not-found' || !firstTry) {
          this.#failure(items.map((p) => p.edit), failure);
          continue;
        }
        // One record of the batch is gone upstream, and the whole batch was refused: find which.
        const present = await this.#existing(items.map((p) => p.edit));
        if (present === undefined) continue;
        for (const p of items) {
          if (!present.has(p.edit.recordId)) {
            this.#r.outcomes.push({ kind: 'conflict', entryIds: p.edit.entryIds, message: deletedMessage(p.edit.recordId) });
          }
        }
        await this.sendUpdates(items.filter((p) => present.has(p.edit.recordId)), false);
      }
    });
  }

  /** One record's update refused on its own: its fields go apart (isolate-fields.ts). */
  async #isolateFields(p: Prepared, message: string): Promise<void> {
    const apart = await sendFieldsApart(p, message, (part) =>
      this.#s.upstream.updateRecords(this.#module, this.#table, [updateRecord(part.edit.recordId, part.body)], this.#call), this.#s.signal);
    for (const part of apart.accepted) this.#r.outcomes.push({ kind: 'pushed', entryIds: part.edit.entryIds });
    for (const { part, message: refusal } of apart.rejected) this.#r.outcomes.push({ kind: 'failed', entryIds: part.edit.entryIds, message: refusal });
    for (const { part, failure } of apart.failed) this.#failure([part.edit], failure);
    this.#r.unsettled.push(...apart.unsent.map((part) => part.edit));
  }

  // ---- deletes ---------------------------------------------------------------------------------

  async sendDeletes(deletes: readonly PendingEdit[], firstTry: boolean): Promise<void> {
    const items = deletes.map((edit) => ({ edit, body: edit.recordId }));
    await this.#eachChunk(items, async (chunk) => {
      const sent = await sendIsolatingRejects(chunk, (batch) =>
        this.#s.upstream.deleteRecords(this.#module, this.#table, batch.map((p) => p.edit.recordId), this.#call), this.#s.signal);
      this.#unsent(sent);
      for (const { items: done } of sent.accepted) for (const p of done) this.#r.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds });
      this.#rejected(sent);
      for (const { items: failedItems, failure } of sent.failed) {
        const edits = failedItems.map((p) => p.edit);
        if (failure.kind !== 'not-found' || !firstTry) {
          this.#failure(edits, failure);
          continue;
        }
        // Deletes are all or nothing: a record already gone (deleted upstream too, or by an
        // earlier send whose answer was lost) refuses the batch. Gone is what was asked.
        const present = await this.#existing(edits);
        if (present === undefined) continue;
        for (const edit of edits) if (!present.has(edit.recordId)) this.#r.outcomes.push({ kind: 'pushed', entryIds: edit.entryIds });
        await this.sendDeletes(edits.filter((e) => present.has(e.recordId)), false);
      }
    });
  }

  // ---- shared ----------------------------------------------------------------------------------

  /**
   * `send` for each batch under the payload limit, `inFlight` batches out at once: they hold
   * different records (one edit per record), so their order does not matter. None is sent once
   * one has met a failure that ends the push (those already out finish).
   */
  #eachChunk<T extends { body: unknown; edit: PendingEdit }>(items: readonly T[], send: (chunk: T[]) => Promise<void>): Promise<void> {
    return forEachInFlight(chunkByPayload(items, this.#s.batch, (p) => p.body), this.#s.inFlight, async (chunk) => {
      // After a failure that would hit every request (401, 403, upstream unreachable…), or once
      // asked to stop, the rest stays as it is: not sent, not charged an attempt.
      if (this.#r.stop !== undefined || this.#s.signal?.aborted === true) this.#r.unsettled.push(...chunk.map((p) => p.edit));
      else await send(chunk);
    });
  }

  /** Ids of these edits' records that exist upstream; undefined (edits marked for retry) when that cannot be read. */
  async #existing(edits: readonly PendingEdit[]): Promise<Set<number> | undefined> {
    try {
      const found = await this.#s.upstream.getRecordsByIds(this.#module, this.#table, edits.map((e) => e.recordId), this.#call);
      return new Set(found.map((r) => Number(r.id)));
    } catch (error) {
      this.#failure(edits, failureOf(error));
      return undefined;
    }
  }

  /**
   * Records what a read-back settled, and returns what is left to send: nothing, when the read
   * met a failure that ends the push.
   */
  #settleReadback<T>(readback: Readback<T>, editOf: (item: T) => PendingEdit): T[] {
    this.#r.outcomes.push(...readback.outcomes);
    this.#r.unsettled.push(...readback.unsettled);
    if (readback.error === undefined || !endsPush(failureOf(readback.error))) return readback.send;
    this.#r.stop ??= readback.error;
    this.#r.unsettled.push(...readback.send.map(editOf));
    return [];
  }

  /** Edits a stop kept from being sent: left as they are (a create marked as being sent is looked for by the next push). */
  #unsent(sent: IsolatedSend<{ edit: PendingEdit }, unknown>): void {
    this.#r.unsettled.push(...sent.unsent.map((p) => p.edit));
  }

  #rejected(sent: IsolatedSend<{ edit: PendingEdit }, unknown>): void {
    for (const { item, message } of sent.rejected) this.#r.outcomes.push({ kind: 'failed', entryIds: item.edit.entryIds, message });
  }

  #failure(edits: readonly PendingEdit[], failure: Exclude<PushFailure, { kind: 'rejected' }>): void {
    if (failure.kind === 'fatal') {
      this.#r.stop ??= failure.error;
      this.#r.unsettled.push(...edits);
      return;
    }
    if (failure.kind === 'not-found') {
      // The table itself is gone (or a record vanished between look-up and send): the next
      // schema pull sorts the table out; try again later.
      this.#retry(edits, { kind: 'transient', message: `${tableLabel(this.#t.table)}: ${failure.message}`, retryAfterMs: undefined, maybeApplied: false });
      return;
    }
    this.#retry(edits, failure);
  }

  /** Charges the edits an attempt; a failure every request would meet ends the push too. */
  #retry(edits: readonly PendingEdit[], failure: Extract<PushFailure, { kind: 'transient' }>): void {
    if (failure.stopsPush !== undefined) this.#r.stop ??= failure.stopsPush;
    this.#charge(edits, failure);
  }

  /** The edits are tried again after a backoff (`next_attempt_at`), one attempt more. */
  #charge(edits: readonly PendingEdit[], failure: Extract<PushFailure, { kind: 'transient' }>): void {
    const now = this.#s.now();
    for (const edit of edits) {
      this.#r.outcomes.push({
        kind: 'retry',
        entryIds: edit.entryIds,
        message: failure.message,
        nextAttemptAt: nextAttemptAt(now, edit.attempts + 1, failure.retryAfterMs, this.#s.retry),
      });
    }
  }
}

/** A failed read (look-up before or after a send): a 400 there is not the edits' fault. */
function failureOf(error: unknown): Exclude<PushFailure, { kind: 'rejected' }> {
  const failure = classifyPushFailure(error);
  return failure.kind === 'rejected' ? { kind: 'fatal', error } : failure;
}
