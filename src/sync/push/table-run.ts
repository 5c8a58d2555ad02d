import type { PendingEdit, SentCreate } from '../../mirror/outbox.ts';
import type { Upstream } from '../upstream.ts';
import type { ReadbackScope } from './create-readback.ts';
import { forEachInFlight } from './in-flight.ts';
import { chunkByPayload } from './payload-chunks.ts';
import type { RetrySchedule } from './push-failure.ts';
import { failureOf, PushLedger, type TablePushResult } from './push-ledger.ts';
import type { PushTarget } from './push-targets.ts';
import { toRequestValue } from './write-shape.ts';

export interface TablePushSettings {
  upstream: Upstream;
  batch: { maxBytes: number; maxItems: number };
  /** Requests of one kind (creates, updates, deletes) out at once. */
  inFlight: number;
  retry: RetrySchedule;
  lookbackMs: number;
  /** How old an unanswered create's send must be before it is looked up (SyncOptions.createSettleMs). */
  createSettleMs: number;
  now: () => number;
  /** Of these upstream ids of the table, those rows inserted here were created as (MirrorOutbox.boundCreatedIds). */
  boundCreatedIds(createdIds: readonly number[]): Promise<Set<number>>;
  /** Marks creates as being sent (entries and body), committed before the request goes out. */
  markSending(creates: readonly SentCreate[]): Promise<void>;
  /** Each field's value before its earliest edit still in the outbox, by record (MirrorOutbox.readBaseValues). */
  baseValues(recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>>;
  /** A stop (shutdown): no further request goes out (a retry's wait included); what was not sent stays as it is. */
  signal?: AbortSignal;
}

export type Body = Record<string, unknown>;

/** An edit with the body it is sent with. */
export interface Prepared {
  edit: PendingEdit;
  body: Body;
}

/**
 * One table's push under way, as its creates (table-push.ts), updates (update-push.ts) and
 * deletes share it: where they send, how their requests go out, and the ledger of what became of
 * each edit (push-ledger.ts).
 */
export class TableRun {
  readonly settings: TablePushSettings;
  readonly target: PushTarget;
  readonly result: TablePushResult;
  readonly ledger: PushLedger;
  readonly module: string;
  readonly table: string;
  readonly readback: ReadbackScope;
  /** Every request of the push carries the stop signal, so a stop also cuts a retry's wait short. */
  readonly call: { signal?: AbortSignal };

  constructor(settings: TablePushSettings, target: PushTarget, result: TablePushResult) {
    this.settings = settings;
    this.target = target;
    this.result = result;
    this.ledger = new PushLedger(result, target.table, settings);
    this.module = target.table.moduleName;
    this.table = target.table.tableName;
    this.readback = {
      upstream: settings.upstream, table: target.table, fieldTypes: target.fieldTypes, fieldOptions: target.fieldOptions, lookbackMs: settings.lookbackMs,
      settleMs: settings.createSettleMs, now: settings.now,
      alreadyBound: async (ids) => {
        const bound = await settings.boundCreatedIds(ids);
        // Bound by this push and not settled yet: sent and answered, or found by a read-back.
        const wanted = new Set(ids);
        for (const o of result.outcomes) if (o.kind === 'pushed' && o.createdId !== undefined && wanted.has(o.createdId)) bound.add(o.createdId);
        return bound;
      },
      ...(settings.signal ? { signal: settings.signal } : {}),
    };
    this.call = settings.signal ? { signal: settings.signal } : {};
  }

  /** The request body of a create or update: writable fields, in the API's request shapes. */
  body(edit: PendingEdit, operation: 'create' | 'update', fields?: ReadonlySet<string>): Body {
    const body: Body = {};
    for (const [name, value] of edit.values) {
      const type = this.target.fieldTypes.get(name);
      if (type === undefined || (fields !== undefined && !fields.has(name))) continue;
      // A create leaves empty fields out, so upstream defaults apply as for any new record.
      if (operation === 'create' && (value === null || value === undefined)) continue;
      body[name] = toRequestValue(type, value, operation);
    }
    return body;
  }

  /**
   * `send` for each batch under the payload limit, `inFlight` batches out at once: they hold
   * different records (one edit per record), so their order does not matter. None is sent once
   * one has met a failure that ends the push (those already out finish).
   */
  eachChunk<T extends { body: unknown; edit: PendingEdit }>(items: readonly T[], send: (chunk: T[]) => Promise<void>): Promise<void> {
    return forEachInFlight(chunkByPayload(items, this.settings.batch, (p) => p.body), this.settings.inFlight, async (chunk) => {
      // After a failure that would hit every request (401, 403, upstream unreachable…), or once
      // asked to stop, the rest stays as it is: not sent, not charged an attempt.
      if (this.result.stop !== undefined || this.settings.signal?.aborted === true) this.result.unsettled.push(...chunk.map((p) => p.edit));
      else await send(chunk);
    });
  }

  /** Ids of these edits' records that exist upstream; undefined (edits marked for retry) when that cannot be read. */
  async existing(edits: readonly PendingEdit[]): Promise<Set<number> | undefined> {
    try {
      const found = await this.settings.upstream.getRecordsByIds(this.module, this.table, edits.map((e) => e.recordId), this.call);
      return new Set(found.map((r) => Number(r.id)));
    } catch (error) {
      this.ledger.failure(edits, failureOf(error));
      return undefined;
    }
  }
}
