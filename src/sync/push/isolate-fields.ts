import type { PendingEdit } from '../../mirror/outbox.ts';
import { classifyPushFailure, endsPush, type PushFailure } from './push-failure.ts';

/** One record's update: its edit and the request body of its changed fields. */
export interface FieldsUpdate {
  edit: PendingEdit;
  body: Record<string, unknown>;
}

export interface IsolatedFields {
  /** Parts upstream applied. */
  accepted: FieldsUpdate[];
  /** Single fields upstream refused (400/413), with its message. */
  rejected: { part: FieldsUpdate; message: string }[];
  /** Parts that failed otherwise (404, transient, fatal): the caller decides. */
  failed: { part: FieldsUpdate; failure: Exclude<PushFailure, { kind: 'rejected' }> }[];
  /** Parts not sent because `signal` asked to stop, or a failure ended the push: left as they are. */
  unsent: FieldsUpdate[];
}

/**
 * One record's update that upstream refused on its own (`message`): its fields are sent in
 * halves until the refused ones stand alone, so each column's edit fails or goes through by itself
 * (an edit is one column's change), as `sendIsolatingRejects` does for the records of a batch.
 * Entries of fields not in the body go with the first half. Nothing more is sent once `signal` is
 * aborted or a failure ends the push (`endsPush`).
 */
export async function sendFieldsApart(
  update: FieldsUpdate, message: string, send: (part: FieldsUpdate) => Promise<unknown>, signal?: AbortSignal,
): Promise<IsolatedFields> {
  const out: IsolatedFields = { accepted: [], rejected: [], failed: [], unsent: [] };
  let ended = false;
  const stopped = () => signal?.aborted === true;
  const sendsNoMore = () => ended || stopped();
  const visit = async (part: FieldsUpdate, refusal: string): Promise<void> => {
    if (sendsNoMore()) {
      out.unsent.push(part);
      return;
    }
    const names = Object.keys(part.body);
    if (names.length <= 1) {
      out.rejected.push({ part, message: refusal });
      return;
    }
    const half = Math.ceil(names.length / 2);
    const halves = [names.slice(0, half), names.slice(half)].map((some) => fieldsOf(part, some));
    const claimed = new Set(halves.flatMap((h) => h.edit.entryIds));
    const rest = part.edit.entryIds.filter((id) => !claimed.has(id));
    if (rest.length > 0) halves[0] = { ...halves[0]!, edit: { ...halves[0]!.edit, entryIds: [...halves[0]!.edit.entryIds, ...rest] } };
    for (const h of halves) {
      if (sendsNoMore()) {
        out.unsent.push(h);
        continue;
      }
      try {
        await send(h);
        out.accepted.push(h);
      } catch (error) {
        // Stopped on its way (a shutdown): left as it is, as one never sent.
        if (stopped()) {
          out.unsent.push(h);
          continue;
        }
        const failure = classifyPushFailure(error);
        if (failure.kind === 'rejected') {
          await visit(h, failure.message);
        } else {
          ended ||= endsPush(failure);
          out.failed.push({ part: h, failure });
        }
      }
    }
  };
  await visit(update, message);
  return out;
}

/** The part of an update that changes only `names`, with those fields' entries. */
function fieldsOf(update: FieldsUpdate, names: readonly string[]): FieldsUpdate {
  const body: Record<string, unknown> = {};
  for (const name of names) body[name] = update.body[name];
  return { edit: { ...update.edit, entryIds: names.flatMap((name) => update.edit.fieldEntryIds.get(name) ?? []) }, body };
}
