import type { MirrorTable } from '../../mirror/catalog.ts';
import type { EditOutcome, PendingEdit } from '../../mirror/outbox.ts';
import { tableLabel } from '../sync-context.ts';
import type { Readback } from './create-readback.ts';
import type { IsolatedSend } from './isolate-rejects.ts';
import { classifyPushFailure, endsPush, nextAttemptAt, type PushFailure, type RetrySchedule } from './push-failure.ts';

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

/**
 * The failure bookkeeping of one table's push that its creates, updates and deletes share: what
 * a failure makes of the edits it met (an attempt charged, left unsettled, or the push ended),
 * recorded in the push's `TablePushResult`.
 */
export class PushLedger {
  readonly #r: TablePushResult;
  readonly #table: MirrorTable;
  /** The push's clock and backoff (TablePushSettings). */
  readonly #s: { now: () => number; retry: RetrySchedule };

  constructor(result: TablePushResult, table: MirrorTable, settings: { now: () => number; retry: RetrySchedule }) {
    this.#r = result;
    this.#table = table;
    this.#s = settings;
  }

  /**
   * Records what a read-back settled, and returns what is left to send: nothing, when the read
   * met a failure that ends the push.
   */
  settleReadback<T>(readback: Readback<T>, editOf: (item: T) => PendingEdit): T[] {
    this.#r.outcomes.push(...readback.outcomes);
    // A record found for a create may have been pulled before (its row gives way to the local
    // one when bound), and no later pull reads it again: its upstream values come back once
    // bound, as upstream stores them (option ids for names sent), local edits left as they are.
    for (const o of readback.outcomes) if (o.kind === 'pushed' && o.createdId !== undefined) this.#r.restore.push(o.createdId);
    this.#r.unsettled.push(...readback.unsettled);
    if (readback.error === undefined || !endsPush(failureOf(readback.error))) return readback.send;
    this.#r.stop ??= readback.error;
    this.#r.unsettled.push(...readback.send.map(editOf));
    return [];
  }

  /** Edits a stop kept from being sent: left as they are (a create marked as being sent is looked for by the next push). */
  unsent(sent: IsolatedSend<{ edit: PendingEdit }, unknown>): void {
    this.#r.unsettled.push(...sent.unsent.map((p) => p.edit));
  }

  rejected(sent: IsolatedSend<{ edit: PendingEdit }, unknown>): void {
    for (const { item, message } of sent.rejected) this.#r.outcomes.push({ kind: 'failed', entryIds: item.edit.entryIds, message });
  }

  failure(edits: readonly PendingEdit[], failure: Exclude<PushFailure, { kind: 'rejected' }>): void {
    if (failure.kind === 'fatal') {
      this.#r.stop ??= failure.error;
      this.#r.unsettled.push(...edits);
      return;
    }
    if (failure.kind === 'not-found') {
      // The table itself is gone (or a record vanished between look-up and send): the next
      // schema pull sorts the table out; try again later.
      this.#retry(edits, { kind: 'transient', message: `${tableLabel(this.#table)}: ${failure.message}`, retryAfterMs: undefined, maybeApplied: false });
      return;
    }
    this.#retry(edits, failure);
  }

  /**
   * Creates whose send got no answer, with their outcomes (`unansweredOutcome`): left marked
   * until upstream cannot still be applying them. With no read-back to tell, the failure is
   * taken as it comes: one every request would meet (a timeout, a reset) ends the push too.
   */
  unanswered(outcomes: readonly EditOutcome[], failure: Extract<PushFailure, { kind: 'transient' }>): void {
    if (failure.stopsPush !== undefined) this.#r.stop ??= failure.stopsPush;
    this.#r.outcomes.push(...outcomes);
  }

  /** Charges the edits an attempt; a failure every request would meet ends the push too. */
  #retry(edits: readonly PendingEdit[], failure: Extract<PushFailure, { kind: 'transient' }>): void {
    if (failure.stopsPush !== undefined) this.#r.stop ??= failure.stopsPush;
    this.charge(edits, failure);
  }

  /** The edits are tried again after a backoff (`next_attempt_at`), one attempt more. */
  charge(edits: readonly PendingEdit[], failure: Extract<PushFailure, { kind: 'transient' }>): void {
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
export function failureOf(error: unknown): Exclude<PushFailure, { kind: 'rejected' }> {
  const failure = classifyPushFailure(error);
  return failure.kind === 'rejected' ? { kind: 'fatal', error } : failure;
}
