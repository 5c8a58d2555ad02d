import type { ApiRecord } from '../../api/records.ts';
import type { EditOutcome, PendingEdit } from '../../mirror/outbox.ts';
import type { ConflictPolicy } from './conflict-policy.ts';
import { sameApiValue } from './same-value.ts';

/** What a conflict policy made of a table's updates, once upstream's current records were read. */
export interface ConflictCheck {
  /** Updates to send; `fields`, when given, are the only ones each keeps. */
  send: { edit: PendingEdit; fields?: ReadonlySet<string> }[];
  /** Updates that will not go as they are: conflicts, and (upstream-wins) discarded edits. */
  outcomes: EditOutcome[];
  /** Records whose upstream values must come back into the mirror (upstream-wins). */
  restore: number[];
}

/**
 * Under `upstream-wins` and `manual` (conflict-policy.ts): compares each edited field's upstream
 * value (`upstream`, by record id) with the value before the edit (`base`: before the earliest
 * edit of the field still in the outbox, failed and conflicting ones included). A field changed upstream
 * meanwhile (to something else than the local value) is dropped (upstream-wins) or marked
 * conflict (manual); the record's other fields still go. An update of a record gone upstream is
 * a conflict.
 */
export function checkConflicts(
  policy: Exclude<ConflictPolicy, 'local-wins'>, updates: readonly PendingEdit[], upstream: ReadonlyMap<number, ApiRecord>,
  base: ReadonlyMap<number, ReadonlyMap<string, unknown>> = new Map(),
): ConflictCheck {
  const out: ConflictCheck = { send: [], outcomes: [], restore: [] };
  /** The value before the earliest edit of the field still in the outbox (`base`), else before this one. */
  const valueBefore = (edit: PendingEdit, name: string) => {
    const before = base.get(edit.recordId);
    return before?.has(name) ? before.get(name) : edit.oldValues.get(name);
  };
  const conflicted = (entryIds: readonly number[], edit: PendingEdit, fields: readonly string[], record: ApiRecord) => {
    if (policy === 'upstream-wins') {
      out.outcomes.push({ kind: 'discarded', entryIds });
      out.restore.push(edit.recordId);
      return;
    }
    const detail = fields
      .map((name) => `${name} is ${show(record.values[name])} upstream (was ${show(valueBefore(edit, name))}, local ${show(edit.values.get(name))})`)
      .join('; ');
    out.outcomes.push({ kind: 'conflict', entryIds, message: `changed upstream since the local edit: ${detail}` });
  };
  for (const edit of updates) {
    const record = upstream.get(edit.recordId);
    if (record === undefined) {
      out.outcomes.push({ kind: 'conflict', entryIds: edit.entryIds, message: deletedMessage(edit.recordId) });
      continue;
    }
    // A field `wsmirror outbox retry` sent again goes as it is: the local value wins.
    const changed = [...edit.values.keys()].filter((name) => {
      if (edit.retriedFields.has(name)) return false;
      const upstreamValue = record.values[name];
      return !sameApiValue(upstreamValue, valueBefore(edit, name)) && !sameApiValue(upstreamValue, edit.values.get(name));
    });
    if (changed.length === 0) {
      out.send.push({ edit });
      continue;
    }
    const split = splitByField(edit, new Set(changed));
    if (split === undefined) {
      // The entries cannot be told apart by field: the whole record's edit follows the policy.
      conflicted(edit.entryIds, edit, changed, record);
      continue;
    }
    conflicted(split.conflicting, edit, changed, record);
    if (split.rest.length > 0) {
      out.send.push({ edit: { ...edit, entryIds: split.rest }, fields: new Set([...edit.values.keys()].filter((n) => !changed.includes(n))) });
    }
  }
  return out;
}

/** The outcome message of an edit of a record deleted upstream. */
export function deletedMessage(recordId: number): string {
  return `record ${recordId} was deleted upstream`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The entries of an update split by field, when the mirror says which entry holds which field
 * (`fieldEntryIds`); undefined when it does not.
 */
function splitByField(edit: PendingEdit, fields: ReadonlySet<string>): { conflicting: number[]; rest: number[] } | undefined {
  const byField = edit.fieldEntryIds;
  if (byField.size === 0) return undefined;
  const conflicting = [...fields].flatMap((name) => byField.get(name) ?? []);
  const taken = new Set(conflicting);
  return { conflicting, rest: edit.entryIds.filter((id) => !taken.has(id)) };
}
