import type { ApiRecord } from '../../api/records.ts';
import type { PendingEdit } from '../../mirror/outbox.ts';
import { checkConflicts, deletedMessage } from './conflict-check.ts';
import { sendFieldsApart } from './isolate-fields.ts';
import { sendIsolatingRejects } from './isolate-rejects.ts';
import { failureOf } from './push-ledger.ts';
import { settableUpdates } from './settable-updates.ts';
import type { Prepared, TableRun } from './table-run.ts';
import { updateRecord } from './write-shape.ts';

/**
 * The updates of one table to send, with their bodies: without the fields the API's update cannot
 * set (settable-updates.ts), and under the table's conflict policy (conflict-check.ts).
 */
export async function prepareUpdates(run: TableRun, updates: readonly PendingEdit[]): Promise<Prepared[]> {
  return applyPolicy(run, settable(run, updates));
}

/** The updates without the fields the API's update cannot set: those fail here (settable-updates.ts). */
function settable(run: TableRun, updates: readonly PendingEdit[]): PendingEdit[] {
  const settable = settableUpdates(updates);
  run.result.outcomes.push(...settable.outcomes);
  return settable.send;
}

/**
 * The updates to send under the table's conflict policy (conflict-check.ts): `local-wins` sends
 * them all without reading; the others read upstream's records first.
 */
async function applyPolicy(run: TableRun, updates: readonly PendingEdit[]): Promise<Prepared[]> {
  const policy = run.target.policy;
  if (policy === 'local-wins' || updates.length === 0) return updates.map((edit) => ({ edit, body: run.body(edit, 'update') }));
  let upstream: Map<number, ApiRecord>;
  try {
    const records = await run.settings.upstream.getRecordsByIds(run.module, run.table, updates.map((e) => e.recordId), run.call);
    upstream = new Map(records.map((r) => [Number(r.id), r]));
  } catch (error) {
    run.ledger.failure(updates, failureOf(error));
    return [];
  }
  const checked = checkConflicts(policy, updates, upstream, await run.settings.baseValues(updates.map((e) => e.recordId)));
  run.result.outcomes.push(...checked.outcomes);
  run.result.restore.push(...checked.restore);
  return checked.send.map(({ edit, fields }) => ({ edit, body: run.body(edit, 'update', fields) }));
}

/** Sends the updates by batch PATCH; a batch refused for one record gone upstream is sent again without it. */
export async function sendUpdates(run: TableRun, updates: Prepared[], firstTry: boolean): Promise<void> {
  await run.eachChunk(updates, async (chunk) => {
    const sent = await sendIsolatingRejects(chunk, (batch) =>
      run.settings.upstream.updateRecords(run.module, run.table, batch.map((p) => updateRecord(p.edit.recordId, p.body)), run.call), run.settings.signal);
    run.ledger.unsent(sent);
    for (const { items } of sent.accepted) for (const p of items) run.result.outcomes.push({ kind: 'pushed', entryIds: p.edit.entryIds });
    for (const { item, message } of sent.rejected) await isolateFields(run, item, message);
    for (const { items, failure } of sent.failed) {
      if (failure.kind !== 'not-found' || !firstTry) {
        run.ledger.failure(items.map((p) => p.edit), failure);
        continue;
      }
      // One record of the batch is gone upstream, and the whole batch was refused: find which.
      const present = await run.existing(items.map((p) => p.edit));
      if (present === undefined) continue;
      for (const p of items) {
        if (!present.has(p.edit.recordId)) {
          run.result.outcomes.push({ kind: 'conflict', entryIds: p.edit.entryIds, message: deletedMessage(p.edit.recordId) });
        }
      }
      await sendUpdates(run, items.filter((p) => present.has(p.edit.recordId)), false);
    }
  });
}

/** One record's update refused on its own: its fields go apart (isolate-fields.ts). */
async function isolateFields(run: TableRun, p: Prepared, message: string): Promise<void> {
  const apart = await sendFieldsApart(p, message, (part) =>
    run.settings.upstream.updateRecords(run.module, run.table, [updateRecord(part.edit.recordId, part.body)], run.call), run.settings.signal);
  for (const part of apart.accepted) run.result.outcomes.push({ kind: 'pushed', entryIds: part.edit.entryIds });
  for (const { part, message: refusal } of apart.rejected) run.result.outcomes.push({ kind: 'failed', entryIds: part.edit.entryIds, message: refusal });
  for (const { part, failure } of apart.failed) run.ledger.failure([part.edit], failure);
  run.result.unsettled.push(...apart.unsent.map((part) => part.edit));
}
