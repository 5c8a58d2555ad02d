import { classifyPushFailure, endsPush, type PushFailure } from './push-failure.ts';

export interface IsolatedSend<T, R> {
  /** Batches the upstream accepted, with its answer. */
  accepted: { items: T[]; result: R }[];
  /** Items the upstream refused on their own (400/413), with its message. */
  rejected: { item: T; message: string }[];
  /** Batches that failed otherwise (404, transient, fatal): the caller decides. */
  failed: { items: T[]; failure: Exclude<PushFailure, { kind: 'rejected' }> }[];
  /** Items not sent because `signal` asked to stop, or a failure ended the push: left as they are. */
  unsent: T[];
}

/**
 * Sends a batch; when the upstream refuses it as a whole (batch operations are all or nothing),
 * splits it in halves and sends each, until the refused items stand alone. k bad items in a
 * batch of n cost about 2·k·log2(n) requests, and every good item still goes through. Once
 * `signal` is aborted (a shutdown), nothing more is sent: against a slow upstream the halves of a
 * large refused batch could otherwise hold a stop for minutes. Nor after a failure that ends the
 * push (`endsPush`: upstream gone, a refused key): each half would only meet it again.
 */
export async function sendIsolatingRejects<T, R>(
  items: readonly T[],
  send: (batch: T[]) => Promise<R>,
  signal?: AbortSignal,
): Promise<IsolatedSend<T, R>> {
  const out: IsolatedSend<T, R> = { accepted: [], rejected: [], failed: [], unsent: [] };
  let ended = false;
  const stopped = () => signal?.aborted === true;
  const visit = async (batch: T[]): Promise<void> => {
    if (batch.length === 0) return;
    if (ended || stopped()) {
      out.unsent.push(...batch);
      return;
    }
    try {
      out.accepted.push({ items: batch, result: await send(batch) });
    } catch (error) {
      // Stopped on its way (a shutdown): whether upstream applied it is unknown, so it is left as
      // it is, as one never sent (a create stays marked as being sent: the next push looks for it).
      if (stopped()) {
        out.unsent.push(...batch);
        return;
      }
      const failure = classifyPushFailure(error);
      if (failure.kind !== 'rejected') {
        ended ||= endsPush(failure);
        out.failed.push({ items: batch, failure });
        return;
      }
      if (batch.length === 1) {
        out.rejected.push({ item: batch[0]!, message: failure.message });
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await visit(batch.slice(0, half));
      await visit(batch.slice(half));
    }
  };
  await visit([...items]);
  return out;
}
