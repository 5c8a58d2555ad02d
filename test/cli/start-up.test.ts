import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
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

async function modulesLoadedBy(args: string[], file: string): Promise<string[]> {
  const trace = join(dir, `${file}.modules`);
  const run = await runWsmirror(args, daemonEnv(emu, { url: `sqlite:${join(dir, `${file}.db`)}` }, {
    NODE_OPTIONS: `--import ${TRACE_HOOK}`,
    WSMIRROR_TEST_MODULE_TRACE: trace,
  }), { cwd: dir });
  expect(run.code, run.stderr).toBe(0);
  return readFileSync(trace, 'utf8').split('\n');
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
