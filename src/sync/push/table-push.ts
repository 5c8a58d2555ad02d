import type { PendingEdit } from '../../mirror/outbox.ts';
import { createdThenDeleted, reconcileCreates, unansweredOutcome } from './create-readback.ts';
import { sendIsolatingRejects } from './isolate-rejects.ts';
import type { TablePushResult } from './push-ledger.ts';
import type { PushTarget } from './push-targets.ts';
import { TableRun, type Prepared, type TablePushSettings } from './table-run.ts';
import { prepareUpdates, sendUpdates } from './update-push.ts';

/**
 * Pushes one table's pending edits (each edit is one record's coalesced change) and says what
 * became of each: creates by POST, updates by batch PATCH (update-push.ts), deletes by DELETE,
 * each in batches under the payload limit. See docs/mirror.md, "Writing to the mirror", for the rules.
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
  const upstreamDeletes = [...deletes.filter((e) => e.recordId > 0), ...await deletesOfCreated(run, deletes.filter((e) => e.recordId < 0))];

  const toCreate = await reconcileUnacknowledged(run, creates.map((edit) => ({ edit, body: run.body(edit, 'create') })));
  const toUpdate = await prepareUpdates(run, updates);
  if (toCreate.length + toUpdate.length + upstreamDeletes.length === 0) return result;
  // Only creates are marked before they go out: an update or delete sent again after a crash
  // gives the same record (absolute values, an already deleted record), a create would not.
  if (toCreate.length > 0) await settings.markSending(toCreate.map((p) => ({ entryIds: p.edit.entryIds, body: p.body })));

  if (toCreate.length > 0) await sendCreates(run, toCreate);
  if (toUpdate.length > 0) await sendUpdates(run, toUpdate, true);
  if (upstreamDeletes.length > 0) await sendDeletes(run, upstreamDeletes, true);
  return result;
}

/**
 * Creates whose earlier send was never acknowledged: bound to the records it made, or sent again
 * (create-readback.ts); those whose send may still be under way upstream wait. `answered`: their
 * send just got an answer, so it is over.
 */
async function reconcileUnacknowledged(run: TableRun, creates: Prepared[], answered = false): Promise<Prepared[]> {
  return run.ledger.settleReadback(await reconcileCreates(run.readback, creates, answered), (p) => p.edit);
}

/** Deletes of rows inserted here: settled, or deletes of the records their create made (create-readback.ts). */
async function deletesOfCreated(run: TableRun, deletes: readonly PendingEdit[]): Promise<PendingEdit[]> {
  return run.ledger.settleReadback(await createdThenDeleted(run.readback, deletes), (e) => e);
}

async function sendCreates(run: TableRun, creates: Prepared[]): Promise<void> {
  await run.eachChunk(creates, async (chunk) => {
    const sentAt = new Date(run.settings.now()).toISOString();
    const sent = await sendIsolatingRejects(chunk, (batch) =>
      run.settings.upstream.createRecords(run.module, run.table, batch.map((p) => p.body), run.call), run.settings.signal);
    run.ledger.unsent(sent);
    for (const { items, result } of sent.accepted) {
      items.forEach((p, i) => {
        const id = Number(result.ids[i]);
        run.result.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds, createdId: id });
      });
    }
    run.ledger.rejected(sent);
    for (const { items, failure } of sent.failed) {
      if (failure.kind === 'transient' && failure.unanswered === true) {
        // No answer: upstream may still be applying the request, and a look-up now could miss
        // records about to appear. They stay marked, and are looked up once the send is old
        // enough (create-readback.ts).
        run.ledger.unanswered(items.map((p) => unansweredOutcome(run.readback, p.edit, sentAt, failure.message)), failure);
      } else if (failure.kind === 'transient' && failure.maybeApplied) {
        // Answered (a 500), so the request is over and the records, if any, exist now: read
        // back at once. A create is not sent again after such a failure, so one failure tells
        // nothing of upstream as a whole: the read-back does, and ends the push if upstream
        // does not answer it.
        const again = await reconcileUnacknowledged(run, items.map((p) => ({ ...p, edit: { ...p.edit, sendingSince: sentAt } })), true);
        run.ledger.charge(again.map((p) => p.edit), failure);
      } else {
        run.ledger.failure(items.map((p) => p.edit), failure);
      }
    }
  });
}

async function sendDeletes(run: TableRun, deletes: readonly PendingEdit[], firstTry: boolean): Promise<void> {
  const items = deletes.map((edit) => ({ edit, body: edit.recordId }));
  await run.eachChunk(items, async (chunk) => {
    const sent = await sendIsolatingRejects(chunk, (batch) =>
      run.settings.upstream.deleteRecords(run.module, run.table, batch.map((p) => p.edit.recordId), run.call), run.settings.signal);
    run.ledger.unsent(sent);
    for (const { items: done } of sent.accepted) for (const p of done) run.result.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds });
    run.ledger.rejected(sent);
    for (const { items: failedItems, failure } of sent.failed) {
      const edits = failedItems.map((p) => p.edit);
      if (failure.kind !== 'not-found' || !firstTry) {
        run.ledger.failure(edits, failure);
        continue;
      }
      // Deletes are all or nothing: a record already gone (deleted upstream too, or by an
      // earlier send whose answer was lost) refuses the batch. Gone is what was asked.
      const present = await run.existing(edits);
      if (present === undefined) continue;
      for (const edit of edits) if (!present.has(edit.recordId)) run.result.outcomes.push({ kind: 'pushed', entryIds: edit.entryIds });
      await sendDeletes(run, edits.filter((e) => present.has(e.recordId)), false);
    }
  });
}
