// `npm run bench -- push`: 10,000 local edits (an UPDATE through a separate SQL connection, so
// the mirror's triggers capture them) pushed by the engine's push step, on SQLite and Postgres,
// as a ratio to sending the same values as raw batch PATCHes with the same client in the same
// run (goal ≤ 1.5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { FieldCreate } from '../src/api/index.ts';
import { WorkspaceClient, type RequestInfo } from '../src/client/index.ts';
import { openMirror, type Mirror } from '../src/mirror/index.ts';
import { SYNC_DEFAULTS, SyncEngine } from '../src/sync/index.ts';
import { pushOutbox } from '../src/sync/push/push-step.ts';
import { spawnEmulator } from '../test/helpers/processes.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { BENCH_PG_URL, dropSchema } from './pg-schema.ts';
import type { BenchOptions } from './run.ts';

const FIELDS: FieldCreate[] = [
  { name: 'title', type: 'string', labels: { '': 'Title' } },
  { name: 'amount', type: 'number', labels: { '': 'Amount' } },
  { name: 'due', type: 'date', labels: { '': 'Due' } },
];

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export async function run(options: BenchOptions = {}) {
  const edits = Number(options['edits'] ?? 10_000);
  const pgUrl = BENCH_PG_URL;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-push-'));
  const emu = await spawnEmulator();
  const out: Record<string, unknown> = { edits, batchRecords: SYNC_DEFAULTS.pushBatchRecords };
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    await ws.createTable('bench', 'invoices', { hasHistory: true }, FIELDS);
    const ids: string[] = [];
    for (let i = 0; i < edits; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, edits - i) }, (_, j) => ({ title: `Invoice ${i + j}`, amount: i + j, due: '2026-11-22' }));
      ids.push(...(await ws.createRecords('bench', 'invoices', batch)));
    }
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const schema = `wsm_bench_push_${Date.now()}`;
      const url = dialect === 'sqlite' ? `sqlite:${join(dir, 'push.db')}` : pgUrl;
      const mirror = await openMirror(url, { pgSchema: schema });
      const requests: RequestInfo[] = [];
      const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId, onRequest: (i) => requests.push(i) });
      try {
        await new SyncEngine({ client, mirror, options: { lookbackMs: 0 } }).runCycle({ forceFullScan: true });
        // What the mirror holds now, in id order; the local edit adds a million to each.
        const base = (await ws.allRecords('bench', 'invoices')).map((r) => r.values.amount as number);
        const value = (i: number) => base[i]! + 1_000_000;

        // Raw: values of the same size as batch PATCHes of the push's batch size, same client.
        const rawStarted = performance.now();
        for (let i = 0; i < ids.length; i += SYNC_DEFAULTS.pushBatchRecords) {
          await client.updateRecords('bench', 'invoices', ids.slice(i, i + SYNC_DEFAULTS.pushBatchRecords).map((id, j) => ({ id, amount: value(i + j) + 0.5 })));
        }
        const rawMs = performance.now() - rawStarted;

        // Local edits through a separate connection: the triggers fill the outbox.
        const editStarted = performance.now();
        await localUpdate(dialect, url, schema, mirror);
        const editMs = performance.now() - editStarted;

        requests.length = 0;
        const pushStarted = performance.now();
        const report = await pushOutbox({ client, mirror, options: { ...SYNC_DEFAULTS, lookbackMs: 0 }, logger: silent });
        const pushMs = performance.now() - pushStarted;
        const left = (await mirror.outboxSummary()).reduce((n, c) => n + c.count, 0);
        const check = await ws.allRecords('bench', 'invoices');
        const arrived = check.filter((r, i) => r.values.amount === value(i)).length;
        out[dialect] = {
          localUpdateMs: Math.round(editMs),
          pushMs: Math.round(pushMs),
          rawPatchMs: Math.round(rawMs),
          pushOverRaw: Number((pushMs / rawMs).toFixed(3)),
          editsPerSecond: Math.round(edits / (pushMs / 1000)),
          pushed: report.pushed,
          requests: requests.length,
          outboxLeft: left,
          arrivedUpstream: arrived,
        };
      } finally {
        await client.close();
        await mirror.close();
        if (dialect === 'postgres') await dropSchema(pgUrl, schema);
      }
    }
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** `amount = amount + 1e6` for every row, as one UPDATE from another connection. */
async function localUpdate(dialect: 'sqlite' | 'postgres', url: string, schema: string, mirror: Mirror): Promise<void> {
  const table = (await mirror.readCatalog()).tables.find((t) => t.tableName === 'invoices')!.sqlName;
  const set = `UPDATE "${table}" SET amount = amount + 1000000`;
  if (dialect === 'sqlite') {
    const db = new Database(url.slice('sqlite:'.length));
    try {
      db.exec(set);
    } finally {
      db.close();
    }
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`SET search_path TO "${schema}"`);
    await c.query(set);
  } finally {
    await c.end();
  }
}
