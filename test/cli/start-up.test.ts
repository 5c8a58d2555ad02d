import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { WSMIRROR_BIN, daemonEnv } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * Start-up is part of every `wsmirror sync` (bench/README.md, "start-up"): a command loads the
 * modules it needs and no others. The emulator, its HTTP framework, the metrics library and the
 * YAML parser (without a configuration file) stay out of a sync.
 */
let emu: RunningEmulator;
const dir = mkdtempSync(join(tmpdir(), 'wsmirror-start-up-'));
const TRACE_HOOK = resolve(import.meta.dirname, '../helpers/module-trace.ts');

beforeAll(async () => {
  emu = await startEmulator();
  const upstream = new UpstreamWorkspace(emu);
  await upstream.createModule('shop');
  await upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
  await upstream.createRecords('shop', 'items', [{ qty: 1 }, { qty: 2 }]);
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Trace {
  modules: string[];
  heapSizeLimit: number;
}

/** Runs `bin/wsmirror ARGS` as a user would (through its shell part) and returns what it loaded. */
async function trace(args: string[], file: string, nodeOptions = ''): Promise<Trace> {
  const path = join(dir, `${file}.trace`);
  const env = {
    ...daemonEnv(emu, { url: `sqlite:${join(dir, `${file}.db`)}` }),
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: `--import ${TRACE_HOOK} ${nodeOptions}`,
    WSMIRROR_TEST_MODULE_TRACE: path,
  };
  const code = await new Promise<number | null>((done) => {
    const child = spawn(WSMIRROR_BIN, args, { env, cwd: dir, stdio: 'ignore' });
    child.once('exit', done);
  });
  expect(code).toBe(0);
  return JSON.parse(readFileSync(path, 'utf8')) as Trace;
}

async function modulesLoadedBy(args: string[], file: string): Promise<string[]> {
  return (await trace(args, file)).modules;
}

it('a sync loads neither the emulator nor the operations server, fastify, prom-client or (without a configuration file) yaml', async () => {
  const loaded = await modulesLoadedBy(['sync'], 'sync');
  expect(loaded.some((url) => url.includes('/src/mirror/'))).toBe(true);
  const unwanted = loaded.filter((url) =>
    /\/src\/emulator\/|\/src\/daemon\/(daemon|http-server|metrics)\.ts|\/node_modules\/(fastify|@fastify|prom-client|@opentelemetry|yaml)\//.test(url));
  expect(unwanted).toEqual([]);
});

it('--help loads no mirror, client or sync code', async () => {
  const loaded = await modulesLoadedBy(['--help'], 'help');
  expect(loaded.some((url) => url.includes('/src/cli/main.ts'))).toBe(true);
  expect(loaded.filter((url) => /\/src\/(mirror|client|sync|emulator)\/|\/node_modules\/(kysely|undici|zod)\//.test(url))).toEqual([]);
});

it('run and sync get the heap bounds of the service packaging unless NODE_OPTIONS sets its own', async () => {
  const unit = readFileSync(resolve(import.meta.dirname, '../../systemd/wsmirror.service'), 'utf8');
  const packaged = /^Environment="NODE_OPTIONS=([^"]+)"$/m.exec(unit)![1]!;
  const shell = readFileSync(WSMIRROR_BIN, 'utf8');
  expect(shell).toContain(`heap="${packaged}"`);
  const MB = 1024 * 1024;
  // 160 MB of old space plus the young generation.
  expect((await trace(['sync'], 'bounded')).heapSizeLimit).toBeLessThan(256 * MB);
  expect((await trace(['sync'], 'own', '--max-old-space-size=400')).heapSizeLimit).toBeGreaterThan(400 * MB);
  expect((await trace(['--help'], 'help-heap')).heapSizeLimit).toBeGreaterThan(400 * MB);
});
