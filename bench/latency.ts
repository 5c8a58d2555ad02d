// `npm run bench -- latency`: how long a change takes to cross over with `wsmirror run` on a 1 s
// schedule, in each direction, on SQLite and Postgres: an upstream edit until a separate SQL
// connection sees it in the mirror, and a local UPDATE until upstream answers with it. The
// daemon is a real `./bin/wsmirror run` process; the emulator a child process. p50, p95, max.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { FieldCreate } from '../src/api/index.ts';
import { daemonEnv, spawnEmulator, stopProcess, WSMIRROR_BIN } from '../test/helpers/processes.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { BENCH_PG_URL, dropSchema } from './pg-schema.ts';
import type { BenchOptions } from './run.ts';
import { median } from './stats.ts';

const FIELDS: FieldCreate[] = [
  { name: 'title', type: 'string', labels: { '': 'Title' } },
  { name: 'amount', type: 'number', labels: { '': 'Amount' } },
];
const POLL_MS = 10;
const TIMEOUT_MS = 30_000;

/** Reads one value of the mirror's row through its own connection. */
interface MirrorReader {
  amount(id: number): Promise<number | null>;
  setTitle(id: number, title: string): Promise<void>;
  close(): Promise<void>;
}

async function sqliteReader(path: string): Promise<MirrorReader> {
  const db = new Database(path);
  db.pragma('busy_timeout = 10000');
  return {
    async amount(id) {
      const row = db.prepare(`SELECT amount FROM bench__latency WHERE id = ?`).get(id) as { amount: number | null } | undefined;
      return row?.amount ?? null;
    },
    async setTitle(id, title) {
      db.prepare(`UPDATE bench__latency SET title = ? WHERE id = ?`).run(title, id);
    },
    async close() {
      db.close();
    },
  };
}

async function postgresReader(url: string, schema: string): Promise<MirrorReader> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const table = `"${schema}"."bench__latency"`;
  return {
    async amount(id) {
      const { rows } = await c.query(`SELECT amount FROM ${table} WHERE id = $1`, [id]);
      return (rows[0]?.amount as number | undefined) ?? null;
    },
    async setTitle(id, title) {
      await c.query(`UPDATE ${table} SET title = $1 WHERE id = $2`, [title, id]);
    },
    async close() {
      await c.end();
    },
  };
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + TIMEOUT_MS;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`latency bench: ${what} did not arrive within ${TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)]!;
  return { samples: ms.length, p50Ms: Math.round(median(sorted)), p95Ms: Math.round(p95), maxMs: Math.round(sorted.at(-1)!) };
}

export async function run(options: BenchOptions = {}) {
  const samples = Number(options['samples'] ?? 20);
  const pgUrl = BENCH_PG_URL;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-latency-'));
  const emu = await spawnEmulator();
  const out: Record<string, unknown> = { schedule: '1s', samples };
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    await ws.createTable('bench', 'latency', { hasHistory: true }, FIELDS);
    const [id] = await ws.createRecords('bench', 'latency', [{ title: 'start', amount: 0 }]);
    const recordId = Number(id);
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const schema = `wsm_bench_latency_${Date.now()}`;
      const mirror = dialect === 'sqlite' ? { url: `sqlite:${join(dir, 'latency.db')}` } : { url: pgUrl, pgSchema: schema };
      const daemon: ChildProcess = spawn(WSMIRROR_BIN, ['run'], {
        env: { ...process.env, ...daemonEnv(emu, mirror, { WSMIRROR_SCHEDULE: '1s' }) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      let reader: MirrorReader | undefined;
      try {
        // The first cycle creates and fills the mirror.
        await waitFor(async () => {
          try {
            reader ??= dialect === 'sqlite' ? await sqliteReader(join(dir, 'latency.db')) : await postgresReader(pgUrl, schema);
            return (await reader.amount(recordId)) !== null;
          } catch {
            await reader?.close().catch(() => {});
            reader = undefined;
            return false;
          }
        }, 'the first cycle');
        const r = reader!;
        const pull: number[] = [];
        const push: number[] = [];
        for (let i = 1; i <= samples; i++) {
          // Upstream → mirror, at a moment unrelated to the schedule.
          await new Promise((res) => setTimeout(res, Math.round(Math.random() * 1000)));
          const amount = Date.now() + i;
          const t0 = performance.now();
          await ws.updateRecords('bench', 'latency', [{ id, amount }]);
          await waitFor(async () => (await r.amount(recordId)) === amount, 'an upstream edit');
          pull.push(performance.now() - t0);
          // Mirror → upstream, at a moment unrelated to the schedule.
          await new Promise((res) => setTimeout(res, Math.round(Math.random() * 1000)));
          const title = `local ${dialect} ${i}`;
          const t1 = performance.now();
          await r.setTitle(recordId, title);
          await waitFor(async () => (await ws.allRecords('bench', 'latency'))[0]?.values.title === title, 'a local edit');
          push.push(performance.now() - t1);
        }
        out[dialect] = { upstreamToMirror: summary(pull), localToUpstream: summary(push) };
      } finally {
        await reader?.close();
        await stopProcess(daemon);
        if (dialect === 'postgres') await dropSchema(pgUrl, schema);
      }
    }
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
