// Emulator at scale: one table of N records (default 1,000,000) created through the HTTP API in
// batches of 1,000, then a deep list page, a record-changes poll page and the emulator's memory.
// The emulator runs as a child process (`bin/wsmirror emulator --port 0`), as a user would run it.
import { processMemory, spawnEmulator } from '../test/helpers/processes.ts';
import { field, recordsPath } from '../test/helpers/schema.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { rawApi } from './raw-api.ts';
import type { BenchOptions } from './run.ts';
import { median, round } from './stats.ts';

const TARGETS = { createRecordsPerSecond: 30_000, listPageMs: 25, changesPageMs: 25, rssBytes: 1.5 * 1024 ** 3 };

export async function run(options: BenchOptions = {}) {
  const total = Number(options.records ?? 1_000_000);
  const batch = Number(options.batch ?? 1000);
  const concurrency = Number(options.concurrency ?? 2);
  const samples = Number(options.samples ?? 50);
  const emu = await spawnEmulator({ stderr: 'inherit' });
  const api = rawApi(emu);
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    await ws.createTable('bench', 'items', { hasHistory: true }, [
      field('name', 'string'),
      field('qty', 'number'),
      field('active', 'boolean'),
      field('status', 'choice', { options: [{ name: 'new' }, { name: 'open' }, { name: 'done' }] }),
      field('due', 'date'),
      field('seen', 'timestamp'),
    ]);
    const records = `${emu.base}/${recordsPath('bench', 'items')}`;
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
    const memory = processMemory(emu.child.pid!);
    if (!memory) throw new Error('cannot read the emulator\'s memory from /proc');

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
    await emu.stop();
  }
}
