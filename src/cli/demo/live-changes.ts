/**
 * What `demo --keep-running` shows while it runs: after each cycle, the rows that came in from
 * upstream and the local edits that went out, one line each; and, on a timer, a few changes the
 * demo makes upstream itself (create a record, change it, delete it), each reported again when
 * it has reached the mirror, with how long that took.
 */
import type { Mirror } from '../../mirror/index.ts';
import type { CycleReport } from '../../sync/index.ts';
import type { ExampleQuery } from './walkthrough.ts';

export interface LiveChangesOptions {
  /** The emulator: where the demo's own changes go. */
  upstream: { url: string; apiKey: string; workspaceId: string };
  /** The table the walkthrough's examples use. */
  example: ExampleQuery;
  mirror: Mirror;
  write: (text: string) => void;
  /** Between two of the demo's own changes. */
  intervalMs: number;
  now?: () => Date;
}

interface Pending {
  what: string;
  madeAt: number;
  /** Whether the mirror's row (undefined: no such row) shows the change. */
  landed: (row: Record<string, unknown> | undefined) => boolean;
  id: string;
}

export interface LiveChanges {
  /** Reports a finished cycle: what moved, and which of the demo's changes arrived. */
  cycleDone(report: CycleReport): Promise<void>;
  stop(): void;
}

export function startLiveChanges(o: LiveChangesOptions): LiveChanges {
  const now = o.now ?? (() => new Date());
  const { example } = o;
  const label = `${example.module}.${example.table}`;
  const base = `${o.upstream.url}/api/v1/workspace/${o.upstream.workspaceId}/modules/${example.module}/tables/${example.table}/records`;
  const say = (text: string) => o.write(`[${now().toTimeString().slice(0, 8)}] ${text}\n`);
  const pending: Pending[] = [];
  let created: string | undefined;

  async function call(method: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await fetch(base, {
      method,
      headers: { authorization: `Bearer ${o.upstream.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data?: Record<string, unknown>; error?: { message?: string } };
    if (!res.ok) throw new Error(`${method} ${label}: HTTP ${res.status} ${json.error?.message ?? ''}`.trim());
    return json.data ?? {};
  }

  // Each step makes one change upstream and says what the mirror will show once it has arrived.
  const steps: (() => Promise<void>)[] = [
    async () => {
      const values = {
        ...(example.textField ? { [example.textField]: 'Made by wsmirror demo' } : {}),
        ...(example.numberField ? { [example.numberField]: 1 } : {}),
      };
      const data = await call('POST', { records: [values] });
      created = String((data.ids as unknown[])[0]);
      const what = `created ${label} #${created}`;
      say(`upstream: ${what} (by the demo)`);
      pending.push({ what, id: created, madeAt: Date.now(), landed: (row) => row !== undefined });
    },
    async () => {
      if (created === undefined || example.numberField === undefined) return;
      const field = example.numberField;
      await call('PATCH', { records: [{ id: created, [field]: 2 }] });
      const what = `${label} #${created}: ${field} 1 → 2`;
      say(`upstream: ${what} (by the demo)`);
      pending.push({ what, id: created, madeAt: Date.now(), landed: (row) => row !== undefined && Number(row[field]) === 2 });
    },
    async () => {
      if (created === undefined) return;
      await call('DELETE', { records: [created] });
      const what = `deleted ${label} #${created}`;
      say(`upstream: ${what} (by the demo)`);
      pending.push({ what, id: created, madeAt: Date.now(), landed: (row) => row === undefined });
    },
  ];
  let next = 0;
  const timer = setInterval(() => {
    const step = steps[next++];
    if (step === undefined) {
      clearInterval(timer);
      return;
    }
    step().catch((error: unknown) => say(`upstream: the demo's change failed: ${(error as Error).message}`));
  }, o.intervalMs);
  timer.unref();

  return {
    async cycleDone(report) {
      if (report.push.pushed > 0) {
        say(`mirror → upstream: ${report.push.pushed} local ${report.push.pushed === 1 ? 'edit' : 'edits'} pushed`);
      }
      for (const t of report.tables) {
        if (t.upserted + t.deleted === 0) continue;
        const parts = [...(t.upserted > 0 ? [`${t.upserted} upserted`] : []), ...(t.deleted > 0 ? [`${t.deleted} deleted`] : [])];
        say(`mirror ← upstream: ${t.table}: ${parts.join(', ')}`);
      }
      // Oldest first: a later change to the same record can only be seen once the earlier one is.
      while (pending.length > 0) {
        const change = pending[0]!;
        const [row] = await o.mirror.readRows(example.tableId, [change.id]);
        if (!change.landed(row?.values)) break;
        pending.shift();
        say(`mirror: ${change.what} arrived ${((Date.now() - change.madeAt) / 1000).toFixed(1)} s after it was made`);
      }
    },
    stop() {
      clearInterval(timer);
    },
  };
}
