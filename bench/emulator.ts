// Emulator at scale: one table of N records (default 1,000,000) created through the HTTP API in
// batches of 1,000, then a deep list page, a record-changes poll page and the emulator's memory.
// The emulator runs as a child process (`bin/wsmirror emulator --port 0`), as a user would run it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from './run.ts';

const API_KEY = 'bench-key';
const ADMIN = 'bench-admin';
const WORKSPACE = 'bench0000001';
const TARGETS = { createRecordsPerSecond: 30_000, listPageMs: 25, changesPageMs: 25, rssBytes: 1.5 * 1024 ** 3 };

async function startEmulator(): Promise<{ child: ChildProcess; url: string }> {
  const bin = fileURLToPath(new URL('../bin/wsmirror', import.meta.url));
  const child = spawn(
    process.execPath,
    [bin, 'emulator', '--port', '0', '--api-key', API_KEY, '--admin-token', ADMIN, '--workspace-id', WORKSPACE],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code} before listening`)));
  });
  return { child, url };
}

async function memoryOf(pid: number): Promise<{ rssBytes: number; peakRssBytes: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export async function run(options: BenchOptions = {}) {
  const total = Number(options.records ?? 1_000_000);
  const batch = Number(options.batch ?? 1000);
  const concurrency = Number(options.concurrency ?? 2);
  const samples = Number(options.samples ?? 50);
  const { child, url } = await startEmulator();
  const api = async (method: string, path: string, body?: unknown, token = API_KEY) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const base = `/api/v1/workspace/${WORKSPACE}/modules/bench/tables`;
    await api('POST', '/_emulator/modules', { name: 'bench' }, ADMIN);
    await api('POST', base, { name: 'items', hasHistory: true });
    const label = (name: string) => ({ '': name });
    await api('POST', `${base}/items/fields/batch`, [
      { name: 'name', type: 'string', labels: label('Name') },
      { name: 'qty', type: 'number', labels: label('Quantity') },
      { name: 'active', type: 'boolean', labels: label('Active') },
      { name: 'status', type: 'choice', labels: label('Status'), options: [{ name: 'new' }, { name: 'open' }, { name: 'done' }] },
      { name: 'due', type: 'date', labels: label('Due') },
      { name: 'seen', type: 'timestamp', labels: label('Seen') },
    ]);
    const records = `${base}/items/records`;
    const statuses = ['new', 'open', 'done'];
    const bodyOf = (from: number, count: number) => {
      const rows = [];
      for (let i = from; i < from + count; i++) {
        rows.push({
          name: `item ${i}`,
          qty: (i % 997) + 0.25,
          active: i % 2 === 0,
          status: statuses[i % 3],
          due: new Date(Date.UTC(2024, 0, 1 + (i % 365))).toISOString().slice(0, 10),
          seen: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
        });
      }
      return JSON.stringify({ records: rows });
    };

    const since = new Date(Date.now() - 1000).toISOString();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          const from = next;
          const count = Math.min(batch, total - from);
          next += count;
          await api('POST', records, bodyOf(from, count));
        }
      }),
    );
    const createSeconds = (performance.now() - started) / 1000;

    const timed = async (path: string) => {
      const t0 = performance.now();
      const body = await api('GET', path);
      return { ms: performance.now() - t0, body };
    };
    const sample = async (path: () => string, check: (body: any) => void) => {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) await timed(path()); // warm-up
      for (let i = 0; i < samples; i++) {
        const { ms, body } = await timed(path());
        check(body);
        times.push(ms);
      }
      return round(median(times));
    };
    const deepOffset = Math.max(0, total - 100);
    const listPageMs = await sample(
      () => `${records}?limit=100&offset=${deepOffset}`,
      (b) => {
        if (b.data.length !== Math.min(100, total)) throw new Error(`list page held ${b.data.length} records`);
      },
    );
    const firstListPageMs = await sample(() => `${records}?limit=100`, () => {});
    const changesPageMs = await sample(
      () => `${records}/changes?since=${since}&limit=100`,
      (b) => {
        if (b.data.length !== Math.min(100, total)) throw new Error(`changes page held ${b.data.length} changes`);
      },
    );
    const first = await api('GET', `${records}/changes?since=${since}&limit=100`);
    const deepChangesPageMs = await sample(
      () => `${records}/changes?since=${since}&asOf=${first.meta.asOf}&limit=100&offset=${deepOffset}`,
      () => {},
    );
    const memory = await memoryOf(child.pid!);

    const createRecordsPerSecond = Math.round(total / createSeconds);
    return {
      records: total,
      batch,
      concurrency,
      samples,
      createSeconds: round(createSeconds),
      createRecordsPerSecond,
      listPageMs,
      listPageOffset: deepOffset,
      firstListPageMs,
      changesPageMs,
      deepChangesPageMs,
      emulatorRssBytes: memory.rssBytes,
      emulatorPeakRssBytes: memory.peakRssBytes,
      targets: TARGETS,
      met: {
        createRecordsPerSecond: createRecordsPerSecond >= TARGETS.createRecordsPerSecond,
        listPageMs: listPageMs <= TARGETS.listPageMs,
        changesPageMs: changesPageMs <= TARGETS.changesPageMs,
        rssBytes: memory.peakRssBytes <= TARGETS.rssBytes,
      },
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}
