import type { EditOutcome, PendingEdit } from '../../mirror/outbox.ts';
import { whyUpdateCannotSet } from './write-shape.ts';

/** A table's updates once the fields the API's update cannot set are taken out. */
export interface SettableUpdates {
  /** Updates with something left to send (fields the update can set, or entries of no field). */
  send: PendingEdit[];
  /** The entries of the fields taken out: failed, saying why. */
  outcomes: EditOutcome[];
}

/**
 * Takes out of each update the fields the API's update cannot set (write-shape.ts: a field named
 * `id`), before any conflict check or send: their entries fail with why, and the record's other
 * fields still go. Sent, such a field's value would be overwritten by the record's id, and the
 * edit lost while its entry left the outbox as pushed.
 */
export function settableUpdates(updates: readonly PendingEdit[]): SettableUpdates {
  const out: SettableUpdates = { send: [], outcomes: [] };
  for (const edit of updates) {
    // No array per edit when nothing is refused (every edit of a push passes here).
    let refused: { name: string; why: string }[] | undefined;
    for (const name of edit.values.keys()) {
      const why = whyUpdateCannotSet(name);
      if (why !== undefined) (refused ??= []).push({ name, why });
    }
    if (refused === undefined) {
      out.send.push(edit);
      continue;
    }
    // Entries that cannot be told apart by field go with the refused field: none is sent without it.
    const taken = new Set<number>();
    for (const { name, why } of refused) {
      const entryIds = edit.fieldEntryIds.get(name) ?? edit.entryIds.filter((id) => !taken.has(id));
      for (const id of entryIds) taken.add(id);
      if (entryIds.length > 0) out.outcomes.push({ kind: 'failed', entryIds, message: why });
    }
    const rest = edit.entryIds.filter((id) => !taken.has(id));
    if (rest.length === 0) continue;
    const names = new Set(refused.map((r) => r.name));
    const keep = <T>(map: ReadonlyMap<string, T>) => new Map([...map].filter(([name]) => !names.has(name)));
    out.send.push({
      ...edit,
      entryIds: rest,
      values: keep(edit.values),
      oldValues: keep(edit.oldValues),
      fieldEntryIds: keep(edit.fieldEntryIds),
      retriedFields: new Set([...edit.retriedFields].filter((name) => !names.has(name))),
    });
  }
  return out;
}
