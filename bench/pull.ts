// `npm run bench -- pull`: initial sync of a 200,000-record table into SQLite and Postgres, as a
// ratio to fetching the same pages with the same client and discarding them (same run), the
// daemon's peak RSS, an incremental cycle of 1,000 updates, and an idle cycle over 50 tables.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FieldCreate } from '../src/api/index.ts';
import { WorkspaceClient, type RequestInfo } from '../src/client/index.ts';
import { openMirror } from '../src/mirror/open-mirror.ts';
import { SyncEngine } from '../src/sync/index.ts';
import { daemonEnv, machineCpuTicks, processCpuMs, runWsmirror, spawnEmulator, type EmulatorProcess } from '../test/helpers/processes.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { freshBundle } from './fresh-bundle.ts';
import { dropSchema } from './pg-schema.ts';
import type { BenchOptions } from './run.ts';

const FIELDS: FieldCreate[] = [
  { name: 'title', type: 'string', labels: { '': 'Title' } },
  { name: 'amount', type: 'number', labels: { '': 'Amount' } },
  { name: 'paid', type: 'boolean', labels: { '': 'Paid' } },
  { name: 'due', type: 'date', labels: { '': 'Due' } },
  { name: 'seen_at', type: 'timestamp', labels: { '': 'Seen at' } },
  { name: 'tags', type: 'multi', labels: { '': 'Tags' }, options: [{ name: 'a' }, { name: 'b' }] },
  { name: 'notes', type: 'html', labels: { '': 'Notes' } },
  { name: 'color', type: 'color', labels: { '': 'Color' } },
  { name: 'owner', type: 'user', labels: { '': 'Owner' } },
  { name: 'payload', type: 'string', labels: { '': 'Payload' } },
];

async function seedTable(ws: UpstreamWorkspace, name: string, count: number, hasHistory = true): Promise<string[]> {
  await ws.createTable('bench', name, { hasHistory });
  const fields = (await ws.addFields('bench', name, FIELDS)) as { data: { name: string; options?: { id: string }[] }[] };
  const tagIds = fields.data.find((f) => f.name === 'tags')!.options!.map((o) => o.id);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1000) {
    const records = Array.from({ length: Math.min(1000, count - i) }, (_, j) => {
      const n = i + j;
      return {
        title: `Invoice ${n}`, amount: n * 1.25, paid: n % 2 === 0, due: '2026-11-22',
        seen_at: new Date(1.7e12 + n * 1000).toISOString(), tags: [tagIds[n % 2]!], notes: `<p>note ${n}</p>`,
        color: '#aabbcc', owner: `user-${n % 50}`, payload: 'x'.repeat(40),
      };
    });
    ids.push(...(await ws.createRecords('bench', name, records)));
  }
  return ids;
}

function client(emu: EmulatorProcess, onRequest?: (i: RequestInfo) => void) {
  return new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId, ...(onRequest ? { onRequest } : {}) });
}

/**
 * CPU spent while `work` ran: the share of the machine's cores that were busy, and the CPU time
 * of the emulator process. Tells whether a pass was bound by CPU or by waiting.
 */
async function measureCpu<T>(emu: EmulatorProcess, work: () => Promise<T>): Promise<T & { machineBusyShare: number; emulatorCpuMs: number }> {
  const machine = machineCpuTicks();
  const emulator = processCpuMs(emu.child.pid!) ?? 0;
  const result = await work();
  const after = machineCpuTicks();
  return {
    ...result,
    machineBusyShare: Number(((after.busy - machine.busy) / (after.total - machine.total)).toFixed(2)),
    emulatorCpuMs: Math.round((processCpuMs(emu.child.pid!) ?? 0) - emulator),
  };
}

async function fetchOnly(emu: EmulatorProcess, table: string, concurrency: number) {
  return measureCpu(emu, async () => {
    const c = client(emu);
    const cpu = process.cpuUsage();
    const started = performance.now();
    let rows = 0;
    for await (const page of c.iterateRecords('bench', table, { pageSize: 100, concurrency })) rows += page.length;
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await c.close();
    return { rows, ms, clientCpuMs: Math.round((used.user + used.system) / 1000) };
  });
}

/** The Node options the service packaging (systemd unit, Dockerfile) starts the daemon with. */
function packagedNodeOptions(): string {
  const unit = readFileSync(new URL('../systemd/wsmirror.service', import.meta.url), 'utf8');
  const m = /^Environment="?NODE_OPTIONS=([^"\n]*)"?$/m.exec(unit);
  if (!m) throw new Error('systemd/wsmirror.service sets no NODE_OPTIONS');
  return m[1]!;
}

/**
 * A whole process that only fetches the table's pages (bench/fetch-pages.ts), started with the
 * same Node options as a sync: the wall time from start to exit, its CPU and peak RSS. Run twice,
 * the second counted: the first fills the compile cache, as the sync's bundle is already built.
 */
async function fetchProcess(emu: EmulatorProcess, table: string, concurrency: number, nodeOptions: string, launcherFlags: readonly string[]) {
  const once = () => new Promise<{ wallMs: number; cpuMs: number; peakRssMB: number; rows: number }>((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...launcherFlags, fileURLToPath(new URL('./fetch-pages.ts', import.meta.url))], {
      env: {
        PATH: process.env['PATH'] ?? '', NODE_OPTIONS: nodeOptions,
        WSMIRROR_BASE_URL: emu.url, WSMIRROR_API_KEY: emu.apiKey, WSMIRROR_WORKSPACE_ID: emu.workspaceId,
        BENCH_MODULE: 'bench', BENCH_TABLE: table, BENCH_CONCURRENCY: String(concurrency),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return fail(new Error(`fetch-pages exited ${code}`));
      const report = JSON.parse(out) as { rows: number; cpuMs: number; maxRssKiB: number };
      done({ wallMs: Math.round(performance.now() - started), cpuMs: report.cpuMs, peakRssMB: Math.round(report.maxRssKiB / 1024), rows: report.rows });
    });
  });
  await once();
  return once();
}

/** The V8 flags the launcher (bin/wsmirror) gives `run` and `sync` beyond NODE_OPTIONS. */
function launcherV8Flags(): string[] {
  const launcher = readFileSync(new URL('../bin/wsmirror', import.meta.url), 'utf8');
  const m = /^\s*v8=(\S+)\s*$/m.exec(launcher);
  if (!m) throw new Error('bin/wsmirror sets no v8 flags for run and sync');
  return m[1]!.split(',');
}

async function syncProcess(emu: EmulatorProcess, mirrorUrl: string, pgSchema: string | undefined, extraEnv: Record<string, string> = {}, launcher = false) {
  const started = performance.now();
  const result = await runWsmirror(['sync', '--json'], daemonEnv(emu, { url: mirrorUrl, pgSchema }, extraEnv), { launcher });
  const wallMs = Math.round(performance.now() - started);
  if (result.code !== 0) throw new Error(`wsmirror sync exited ${result.code}: ${result.stderr}`);
  const report = JSON.parse(result.stdout) as { durationMs: number; tables: { upserted: number }[] };
  return {
    ms: report.durationMs,
    wallMs,
    upserted: report.tables.reduce((s, t) => s + t.upserted, 0),
    peakRssBytes: result.peakRssBytes,
    daemonCpuMs: Math.round(result.cpuMs ?? 0),
  };
}

export async function run(options: BenchOptions = {}) {
  const records = Number(options['records'] ?? 200_000);
  const concurrency = Number(options['concurrency'] ?? 4);
  const pgUrl = process.env['WSMIRROR_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  const emu = await spawnEmulator();
  const out: Record<string, unknown> = { records, concurrency, bundle: await freshBundle() };
  try {
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('bench');
    const seedStarted = performance.now();
    const ids = await seedTable(ws, 'invoices', records);
    out['seedRecordsPerSecond'] = Math.round(records / ((performance.now() - seedStarted) / 1000));
    // Let the default 10 s lookback pass, so the sync measures the scan, not a re-read of rows
    // created a moment ago.
    await new Promise((r) => setTimeout(r, 11_000));

    // Initial sync, per dialect and per launch setting: Node's defaults, and the options the
    // service packaging uses. Each sync is paired with a fetch-only pass taken just before it.
    // `--node-options="…"` tries other launch options in place of the packaged ones.
    const packaged = typeof options['node-options'] === 'string' ? options['node-options'] : packagedNodeOptions();
    // Node's defaults: `node bin/wsmirror`, which skips the launcher's options. Packaged: through
    // the launcher, as the systemd unit and the Dockerfile start it (its V8 flags given to the
    // fetching process too).
    const launches = { nodeDefaults: '', packaged };
    const v8Flags = launcherV8Flags();
    out['packagedNodeOptions'] = packaged;
    const initial: Record<string, Record<string, unknown>> = {};
    let n = 0;
    for (const dialect of ['sqlite', 'postgres'] as const) {
      initial[dialect] = {};
      for (const [launch, nodeOptions] of Object.entries(launches)) {
        const fetch = await fetchOnly(emu, 'invoices', concurrency);
        const schema = dialect === 'postgres' ? `wsm_bench_${Date.now()}_${++n}` : undefined;
        const mirrorUrl = dialect === 'postgres' ? pgUrl : `sqlite:${join(dir, `bench-${++n}.db`)}`;
        const sync = await measureCpu(emu, () =>
          syncProcess(emu, mirrorUrl, schema, {
            NODE_OPTIONS: nodeOptions,
            WSMIRROR_TABLES_INCLUDE: 'bench.invoices',
            WSMIRROR_SYNC_BACKFILL_CONCURRENCY: String(concurrency),
          }, launch === 'packaged'),
        );
        const whole = await fetchProcess(emu, 'invoices', concurrency, nodeOptions, launch === 'packaged' ? v8Flags : []);
        initial[dialect]![launch] = {
          fetchOnlyMs: Math.round(fetch.ms),
          fetchRecordsPerSecond: Math.round(fetch.rows / (fetch.ms / 1000)),
          syncMs: sync.ms,
          syncRecordsPerSecond: Math.round(records / (sync.ms / 1000)),
          syncOverFetch: Number((sync.ms / fetch.ms).toFixed(3)),
          daemonPeakRssMB: sync.peakRssBytes === undefined ? null : Math.round(sync.peakRssBytes / 1048576),
          upserted: sync.upserted,
          // Whole processes, start to exit: the sync against a process that only fetches.
          wholeProcess: {
            syncMs: sync.wallMs, fetchMs: whole.wallMs, syncOverFetch: Number((sync.wallMs / whole.wallMs).toFixed(3)),
            syncCpuMs: sync.daemonCpuMs, fetchCpuMs: whole.cpuMs, fetchPeakRssMB: whole.peakRssMB,
          },
          cpu: {
            fetch: { machineBusyShare: fetch.machineBusyShare, emulatorMs: fetch.emulatorCpuMs, clientMs: fetch.clientCpuMs },
            sync: { machineBusyShare: sync.machineBusyShare, emulatorMs: sync.emulatorCpuMs, daemonMs: sync.daemonCpuMs },
          },
        };
        if (schema) await dropSchema(pgUrl, schema);
      }
    }
    // Peak RSS does not depend on table size: the same sync of a table a tenth the size.
    const small = Math.max(1000, Math.round(records / 10));
    await seedTable(ws, 'invoices_small', small);
    const smallSync = await syncProcess(emu, `sqlite:${join(dir, 'small.db')}`, undefined, {
      NODE_OPTIONS: launches.packaged,
      WSMIRROR_TABLES_INCLUDE: 'bench.invoices_small',
    }, true);
    out['peakRssBySize'] = {
      [`${small} records`]: Math.round((smallSync.peakRssBytes ?? 0) / 1048576),
      [`${records} records`]: (initial['sqlite']!['packaged'] as { daemonPeakRssMB: number }).daemonPeakRssMB,
    };
    out['initialSync'] = initial;

    // Incremental: 1,000 updates applied by one cycle (in process, SQLite).
    const mirror = await openMirror(`sqlite:${join(dir, 'incremental.db')}`);
    const requests: RequestInfo[] = [];
    const c = client(emu, (i) => requests.push(i));
    const engine = new SyncEngine({ client: c, mirror, options: { lookbackMs: 0 } });
    await engine.runCycle({ forceFullScan: true });
    for (let i = 0; i < 1000; i += 100) {
      await ws.updateRecords('bench', 'invoices', ids.slice(i, i + 100).map((id) => ({ id, amount: -1 })));
    }
    let started = performance.now();
    const inc = await engine.runCycle();
    out['incremental1000Updates'] = { ms: Math.round(performance.now() - started), upserted: inc.tables[0]?.upserted };
    await mirror.close();

    // Idle cycle over 50 history tables.
    for (let t = 0; t < 49; t++) await ws.createTable('bench', `idle_${t}`, { hasHistory: true });
    const idleMirror = await openMirror(`sqlite:${join(dir, 'idle.db')}`);
    const idleEngine = new SyncEngine({ client: c, mirror: idleMirror, options: { lookbackMs: 0 } });
    await idleEngine.runCycle({ forceFullScan: true });
    await new Promise((r) => setTimeout(r, 50));
    requests.length = 0;
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      started = performance.now();
      await idleEngine.runCycle();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    out['idleCycle50Tables'] = {
      medianMs: Number(samples[2]!.toFixed(1)),
      requestsPerCycle: requests.length / 5,
      schemaRequestsPerCycle: requests.filter((r) => r.endpoint === 'listSchemaChanges').length / 5,
    };
    await idleMirror.close();
    await c.close();
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
