import type { EditOutcome, MirrorOutbox } from '../../mirror/outbox.ts';
import type { SyncLogger } from '../observer.ts';

/** Edits (records) by what became of them in one push. */
export interface PushReport {
  pushed: number;
  failed: number;
  conflict: number;
  retry: number;
  /** Not sent: they wait for a row inserted here to be created upstream. */
  waiting: number;
  discarded: number;
  /** Left marked as being sent: their outcome could not be learnt yet. */
  unsettled: number;
}

/**
 * Records outcomes in the mirror (one transaction), counts them in the report, and logs the
 * edits that will not go upstream as they are (failed, conflict).
 */
export async function settleOutcomes(
  mirror: Pick<MirrorOutbox, 'settleEdits'>, logger: SyncLogger, outcomes: readonly EditOutcome[], report: PushReport,
): Promise<void> {
  if (outcomes.length === 0) return;
  await mirror.settleEdits(combineOutcomes(outcomes));
  for (const outcome of outcomes) {
    // An unanswered create is tried again (looked up) later: a retry, as the report counts.
    report[outcome.kind === 'unanswered' ? 'retry' : outcome.kind] += 1;
    if (outcome.kind === 'failed' || outcome.kind === 'conflict') {
      logger.warn({ entryIds: outcome.entryIds, status: outcome.kind, error: outcome.message }, 'local edit not pushed');
    }
  }
}

/**
 * Pushed edits without a created id, and discarded ones, settled as one outcome each: the
 * mirror then settles them with a few statements instead of one per record. Outcomes that carry
 * a created id or a message stay as they are.
 */
export function combineOutcomes(outcomes: readonly EditOutcome[]): EditOutcome[] {
  const pushed: number[] = [];
  const discarded: number[] = [];
  const rest: EditOutcome[] = [];
  for (const outcome of outcomes) {
    if (outcome.kind === 'pushed' && outcome.createdId === undefined) pushed.push(...outcome.entryIds);
    else if (outcome.kind === 'discarded') discarded.push(...outcome.entryIds);
    else rest.push(outcome);
  }
  if (pushed.length > 0) rest.push({ kind: 'pushed', entryIds: pushed });
  if (discarded.length > 0) rest.push({ kind: 'discarded', entryIds: discarded });
  return rest;
}
