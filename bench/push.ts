// `npm run bench -- push`: 10,000 local edits (an UPDATE through a separate SQL connection, so
// the mirror's triggers capture them) pushed by the engine's push step, on SQLite and Postgres,
// as a ratio to sending the same values as raw batch PATCHes with the same client in the same
// run (goal ≤ 1.5). Each side's CPU is counted per process (this one, the emulator, a local
// Postgres server): on two cores their sum bounds how fast the push can be.
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
import { processCpuMs, spawnEmulator } from '../test/helpers/processes.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { BENCH_PG_URL, dropSchema, localPostgresCpu, postgresCpuBetween } from './pg-schema.ts';
import type { BenchOptions } from './run.ts';

const FIELDS: FieldCreate[] = [
  { name: 'title', type: 'string', labels: { '': 'Title' } },
  { name: 'amount', type: 'number', labels: { '': 'Amount' } },
  { name: 'due', type: 'date', labels: { '': 'Due' } },
];

const silent = { debug() {}, info() {}, warn() {}, error() {} };

export async function run(options: BenchOptions = {}) {
  const edits = Number(options['edits'] ?? 10_000);
  const repeat = Number(options['repeat'] ?? 3);
  /** Milliseconds the emulator waits before each answer, as an upstream across a network would. */
  const latencyMs = Number(options['latency'] ?? 0);
  const pushOptions = { ...SYNC_DEFAULTS, lookbackMs: 0, ...(options['round'] ? { pushRoundRecords: Number(options['round']) } : {}) };
  const pgUrl = BENCH_PG_URL;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-push-'));
  const emu = await spawnEmulator();
  const out: Record<string, unknown> = { edits, repeat, batchRecords: pushOptions.pushBatchRecords, latencyMs };
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
        // What the mirror holds now, in id order; each local edit adds a million to each.
        const base = (await ws.allRecords('bench', 'invoices')).map((r) => r.values.amount as number);
        const runs: {
          rawMs: number; editMs: number; pushMs: number; pushed: number; requests: number; arrived: number; left: number;
          rawCpu: CpuAccount; pushCpu: CpuAccount;
        }[] = [];
        const account = cpuAccount(emu.child.pid!, dialect === 'postgres');
        if (latencyMs > 0) await ws.setFaults({ latencyMs });
        // Raw and push alternate, `repeat` times, so both see the same moments of a shared machine.
        for (let rep = 1; rep <= repeat; rep++) {
          const value = (i: number) => base[i]! + rep * 1_000_000;
          // Raw: values of the same size as batch PATCHes of the push's batch size, same client.
          const rawStarted = performance.now();
          const rawCpu = account();
          for (let i = 0; i < ids.length; i += pushOptions.pushBatchRecords) {
            await client.updateRecords('bench', 'invoices', ids.slice(i, i + pushOptions.pushBatchRecords).map((id, j) => ({ id, amount: value(i + j) + 0.5 })));
          }
          const rawMs = performance.now() - rawStarted;
          const rawCpuUsed = rawCpu();

          // Local edits through a separate connection: the triggers fill the outbox.
          const editStarted = performance.now();
          await localUpdate(dialect, url, schema, mirror);
          const editMs = performance.now() - editStarted;

          requests.length = 0;
          const pushStarted = performance.now();
          const pushCpu = account();
          const report = await pushOutbox({ client, mirror, options: pushOptions, logger: silent });
          const pushMs = performance.now() - pushStarted;
          const pushCpuUsed = pushCpu();
          const left = (await mirror.outboxSummary()).reduce((n, c) => n + c.count, 0);
          const check = await ws.allRecords('bench', 'invoices');
          const arrived = check.filter((r, i) => r.values.amount === value(i)).length;
          runs.push({ rawMs, editMs, pushMs, pushed: report.pushed, requests: requests.length, arrived, left, rawCpu: rawCpuUsed, pushCpu: pushCpuUsed });
        }
        const median = (pick: (r: (typeof runs)[number]) => number) => {
          const sorted = runs.map(pick).sort((a, b) => a - b);
          return sorted[Math.floor(sorted.length / 2)]!;
        };
        const cpuOf = (pick: (r: (typeof runs)[number]) => CpuAccount) => ({
          thisProcessMs: Math.round(median((r) => pick(r).thisProcessMs)),
          emulatorMs: Math.round(median((r) => pick(r).emulatorMs)),
          ...(dialect === 'postgres' ? { postgresMs: Math.round(median((r) => pick(r).postgresMs ?? 0)) } : {}),
        });
        out[dialect] = {
          roundRecords: pushOptions.pushRoundRecords ?? mirror.preferredPushRoundRecords,
          localUpdateMs: Math.round(median((r) => r.editMs)),
          pushMs: Math.round(median((r) => r.pushMs)),
          rawPatchMs: Math.round(median((r) => r.rawMs)),
          pushOverRaw: Number(median((r) => r.pushMs / r.rawMs).toFixed(3)),
          pushOverRawEachRun: runs.map((r) => Number((r.pushMs / r.rawMs).toFixed(2))),
          // Medians of each process's CPU during the raw PATCHes and during the push.
          cpuMs: { raw: cpuOf((r) => r.rawCpu), push: cpuOf((r) => r.pushCpu) },
          editsPerSecond: Math.round(edits / (median((r) => r.pushMs) / 1000)),
          pushed: Math.min(...runs.map((r) => r.pushed)),
          requests: Math.max(...runs.map((r) => r.requests)),
          outboxLeft: Math.max(...runs.map((r) => r.left)),
          arrivedUpstream: Math.min(...runs.map((r) => r.arrived)),
        };
      } finally {
        if (latencyMs > 0) await ws.clearFaults();
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

interface CpuAccount {
  thisProcessMs: number;
  emulatorMs: number;
  postgresMs: number | undefined;
}

/** Starts counting CPU; the function returned stops and gives each process's share. */
function cpuAccount(emulatorPid: number, withPostgres: boolean): () => () => CpuAccount {
  return () => {
    const own = process.cpuUsage();
    const emulator = processCpuMs(emulatorPid) ?? 0;
    const postgres = withPostgres ? localPostgresCpu() : undefined;
    return () => {
      const used = process.cpuUsage(own);

      return {
        thisProcessMs: (used.user + used.system) / 1000,
        emulatorMs: (processCpuMs(emulatorPid) ?? 0) - emulator,
        postgresMs: postgres === undefined ? undefined : postgresCpuBetween(postgres, localPostgresCpu()),
      };
    };
  };
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
