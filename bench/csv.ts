// CSV import at scale: a ~50 MB file of 500,000 rows of 10 columns imported through the API into
// an emulator running as a child process (`bin/wsmirror emulator --port 0`), uploaded by the
// client (`WorkspaceClient.importCsv`, streamed from disk). Measures rows/s over the whole request
// (upload, parse, checks, writes, commit) and the emulator's memory: RSS before, sampled every
// 20 ms during the import, and its peak (VmHWM). Also the emulator's CPU time during the request
// (user + system, from /proc): rows per CPU-second is what the machine's load changes least.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { WorkspaceClient } from '../src/client/index.ts';
import { processCpuMs, processMemory, spawnEmulator } from '../test/helpers/processes.ts';
import { field } from '../test/helpers/schema.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import type { BenchOptions } from './run.ts';
import { round } from './stats.ts';

const TARGETS = { rowsPerSecond: 50_000, rssGrowthBytes: 300 * 1024 * 1024 };
const MiB = 1024 * 1024;

/** CPU seconds (user + system) a live process has used. */
function cpuSeconds(pid: number): number {
  const ms = processCpuMs(pid);
  if (ms === undefined) throw new Error(`csv bench: no CPU time for process ${pid}`);
  return ms / 1000;
}

/** Writes `rows` rows of ten columns (text with quotes and commas, numbers, booleans, choices, dates, timestamps). */
async function writeFile(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  const statuses = ['new', 'open', 'done'];
  out.write('name,qty,price,active,status,due,seen,note,code,city\n');
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const due = new Date(Date.UTC(2024, 0, 1 + (i % 365))).toISOString().slice(0, 10);
    const seen = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString();
    chunk += `n${i},${i % 997},"${(i * 1.25 + 1000).toLocaleString('en-US', { minimumFractionDigits: 2 })}",`
      + `${i % 2 === 0},${statuses[i % 3]},${due},${seen},"a, ""b"" ${i % 1000}",C${i},Zürich\n`;
    if (chunk.length > MiB) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

export async function run(options: BenchOptions = {}) {
  const rows = Number(options.rows ?? 500_000);
  const batchSize = Number(options.batchSize ?? 100);
  const dir = await mkdtemp(join(tmpdir(), 'wsmirror-bench-csv-'));
  const file = join(dir, 'bench.csv');
  await writeFile(file, rows);
  const fileBytes = (await stat(file)).size;
  // --onDisk: the emulator keeps its store in a file (--data) rather than in memory.
  const onDisk = options.onDisk === true || options.onDisk === 'true';
  const emu = await spawnEmulator({ stderr: 'inherit', args: onDisk ? ['--data', join(dir, 'emulator.db')] : [] });
  const pid = emu.child.pid!;
  const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    await ws.createTable('bench', 'items', { hasHistory: true }, [
      field('name', 'string'),
      field('qty', 'number'),
      field('price', 'number'),
      field('active', 'boolean'),
      field('status', 'choice', { options: [{ name: 'new' }, { name: 'open' }, { name: 'done' }] }),
      field('due', 'date'),
      field('seen', 'timestamp'),
      field('note', 'string'),
      field('code', 'string', { unique: true }),
      field('city', 'string'),
    ]);
    const before = processMemory(pid);
    if (!before) throw new Error('cannot read the emulator\'s memory from /proc');
    let peakSampled = before.rssBytes;
    const sampler = setInterval(() => {
      const now = processMemory(pid);
      if (now) peakSampled = Math.max(peakSampled, now.rssBytes);
    }, 20);
    const cpuBefore = cpuSeconds(pid);
    const loadBefore = loadavg()[0]!;
    const started = performance.now();
    let result;
    try {
      result = await client.importCsv('bench', 'items', file, { batchSize });
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    const emulatorCpuSeconds = cpuSeconds(pid) - cpuBefore;
    const after = processMemory(pid)!;
    if (result.rowsImported !== rows) throw new Error(`imported ${result.rowsImported} rows of ${rows}`);
    const rowsPerSecond = Math.round(rows / seconds);
    const rssGrowthBytes = Math.max(after.peakRssBytes, peakSampled) - before.rssBytes;
    return {
      rows,
      columns: 10,
      store: onDisk ? 'file' : 'memory',
      fileBytes,
      batchSize,
      seconds: round(seconds),
      rowsPerSecond,
      emulatorCpuSeconds: round(emulatorCpuSeconds),
      rowsPerEmulatorCpuSecond: Math.round(rows / emulatorCpuSeconds),
      loadAverage: { before: round(loadBefore), after: round(loadavg()[0]!) },
      emulatorRssBeforeBytes: before.rssBytes,
      emulatorRssAfterBytes: after.rssBytes,
      emulatorPeakRssBytes: Math.max(after.peakRssBytes, peakSampled),
      rssGrowthBytes,
      targets: TARGETS,
      met: { rowsPerSecond: rowsPerSecond >= TARGETS.rowsPerSecond, rssGrowthBytes: rssGrowthBytes < TARGETS.rssGrowthBytes },
    };
  } finally {
    await client.close();
    await emu.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
