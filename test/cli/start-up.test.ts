import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { WSMIRROR_BIN, daemonEnv } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * Start-up is part of every `wsmirror sync` (bench/README.md, "start-up"): a command loads the
 * modules it needs and no others, from the bundle that `npm ci` builds (bin/bundle.mjs) when it
 * is up to date, else from the sources. The emulator, its HTTP framework, the metrics library
 * and the YAML parser (without a configuration file) stay out of a sync.
 */
let emu: RunningEmulator;
const dir = mkdtempSync(join(tmpdir(), 'wsmirror-start-up-'));
const TRACE_HOOK = resolve(import.meta.dirname, '../helpers/module-trace.ts');
const CHECKOUT = resolve(import.meta.dirname, '../..');
const BUNDLE = join('node_modules', '.cache', 'wsmirror-bundle');

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
  /** URLs of the modules the process loaded, as Node named them. */
  urls: string[];
  /** The same, with each file of a bundle replaced by the sources and package files it holds. */
  modules: string[];
  heapSizeLimit: number;
}

/**
 * The source and package files in each loaded file of `checkout`'s bundle (esbuild's metafile
 * names them), so that the checks below read the same whether a command ran from the bundle or
 * from the sources.
 */
function unbundled(urls: string[], checkout: string): string[] {
  const folder = pathToFileURL(join(checkout, BUNDLE)).href + '/';
  if (!urls.some((url) => url.startsWith(folder))) return urls;
  const { outputs } = JSON.parse(readFileSync(join(checkout, BUNDLE, 'meta.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return urls.flatMap((url) => {
    if (!url.startsWith(folder)) return [url];
    const output = outputs[join(BUNDLE, url.slice(folder.length))];
    if (!output) throw new Error(`${url} is not in the bundle's metafile`);
    return Object.keys(output.inputs).map((input) => pathToFileURL(join(checkout, input)).href);
  });
}

/** Runs `BIN ARGS` as a user would (through its shell part) and returns what it loaded. */
async function trace(args: string[], file: string, options: { nodeOptions?: string; checkout?: string } = {}): Promise<Trace> {
  const checkout = options.checkout ?? CHECKOUT;
  const path = join(dir, `${file}.trace`);
  const env = {
    ...daemonEnv(emu, { url: `sqlite:${join(dir, `${file}.db`)}` }),
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: `--import ${TRACE_HOOK} ${options.nodeOptions ?? ''}`,
    WSMIRROR_TEST_MODULE_TRACE: path,
  };
  const cwd = join(dir, file);
  mkdirSync(cwd, { recursive: true });
  const code = await new Promise<number | null>((done) => {
    const child = spawn(join(checkout, 'bin', 'wsmirror'), args, { env, cwd, stdio: 'ignore' });
    child.once('exit', done);
  });
  expect(code).toBe(0);
  const { modules: urls, heapSizeLimit } = JSON.parse(readFileSync(path, 'utf8')) as { modules: string[]; heapSizeLimit: number };
  return { urls, modules: unbundled(urls, checkout), heapSizeLimit };
}

async function modulesLoadedBy(args: string[], file: string): Promise<string[]> {
  return (await trace(args, file)).modules;
}

const NOT_IN_A_SYNC = /\/src\/emulator\/|\/src\/daemon\/(daemon|http-server|metrics)\.ts|\/node_modules\/(fastify|@fastify|prom-client|@opentelemetry|yaml)\//;

it('a sync loads neither the emulator nor the operations server, fastify, prom-client or (without a configuration file) yaml', async () => {
  const loaded = await modulesLoadedBy(['sync'], 'sync');
  expect(loaded.some((url) => url.includes('/src/mirror/'))).toBe(true);
  expect(loaded.filter((url) => NOT_IN_A_SYNC.test(url))).toEqual([]);
});

it("a sync loads undici's pool, not its entry module with WebSocket, EventSource, caches and mocks", async () => {
  const loaded = await modulesLoadedBy(['sync'], 'sync-undici');
  expect(loaded.some((url) => url.endsWith('/node_modules/undici/lib/dispatcher/pool.js'))).toBe(true);
  expect(loaded.filter((url) => /\/node_modules\/undici\/(index\.js|lib\/(mock|cache|web\/(websocket|eventsource|cache))\/)/.test(url))).toEqual([]);
});

it('--help loads no mirror, client or sync code', async () => {
  const loaded = await modulesLoadedBy(['--help'], 'help');
  expect(loaded.some((url) => url.includes('/src/cli/main.ts'))).toBe(true);
  expect(loaded.filter((url) => /\/src\/(mirror|client|sync|emulator)\/|\/node_modules\/(kysely|undici|zod)\//.test(url))).toEqual([]);
});

it('run and sync get the heap bounds of the service packaging unless NODE_OPTIONS sets its own', async () => {
  const unit = readFileSync(resolve(import.meta.dirname, '../../systemd/wsmirror.service'), 'utf8');
  const packaged = /^Environment="NODE_OPTIONS=([^"]+)"$/m.exec(unit)![1]!;
  expect(readFileSync(resolve(import.meta.dirname, '../../Dockerfile'), 'utf8')).toContain(`ENV NODE_OPTIONS="${packaged}"`);
  const shell = readFileSync(WSMIRROR_BIN, 'utf8');
  expect(shell).toContain(`heap="${packaged}"`);
  const MB = 1024 * 1024;
  // 160 MB of old space plus the young generation.
  expect((await trace(['sync'], 'bounded')).heapSizeLimit).toBeLessThan(256 * MB);
  expect((await trace(['sync'], 'own', { nodeOptions: '--max-old-space-size=400' })).heapSizeLimit).toBeGreaterThan(400 * MB);
  expect((await trace(['--help'], 'help-heap')).heapSizeLimit).toBeGreaterThan(400 * MB);
});

/**
 * A checkout of its own (bin, src, config, package.json; node_modules links to this one's
 * packages), so that its bundle can be built, made stale and removed without touching the
 * bundle the other suites run.
 */
describe('the bundle', () => {
  const copy = join(dir, 'checkout');
  const bundledFiles = (urls: string[]) => urls.filter((url) => url.startsWith(pathToFileURL(join(copy, BUNDLE)).href));
  const sourceFiles = (urls: string[]) => urls.filter((url) => url.startsWith(pathToFileURL(join(copy, 'src')).href));

  beforeAll(async () => {
    for (const entry of ['bin', 'src', 'config', 'package.json']) cpSync(join(CHECKOUT, entry), join(copy, entry), { recursive: true });
    mkdirSync(join(copy, 'node_modules', '.cache'), { recursive: true });
    for (const entry of readdirSync(join(CHECKOUT, 'node_modules'))) {
      if (entry !== '.cache') symlinkSync(join(CHECKOUT, 'node_modules', entry), join(copy, 'node_modules', entry));
    }
    const code = await new Promise<number | null>((done) => {
      const child = spawn(process.execPath, [join(copy, 'bin', 'bundle.mjs')], { stdio: 'ignore' });
      child.once('exit', done);
    });
    expect(code).toBe(0);
    expect(existsSync(join(copy, BUNDLE, 'manifest.json'))).toBe(true);
  }, 60_000);

  it('a sync runs from the bundle: no source file, and still none of what a sync never needs', async () => {
    const { urls, modules } = await trace(['sync'], 'bundled-sync', { checkout: copy });
    expect(bundledFiles(urls)).not.toEqual([]);
    expect(sourceFiles(urls)).toEqual([]);
    expect(modules.some((url) => url.includes('/src/mirror/'))).toBe(true);
    expect(modules.filter((url) => NOT_IN_A_SYNC.test(url))).toEqual([]);
    // Tree-shaken: of zod's 40 locales only the English one that zod itself sets.
    expect(modules.filter((url) => /\/node_modules\/zod\/v4\/locales\/(?!en\.js)/.test(url))).toEqual([]);
  });

  it('the demo runs from the bundle, emulator and all, and finds its seed file', async () => {
    const { urls, modules } = await trace(['demo'], 'bundled-demo', { checkout: copy });
    expect(sourceFiles(urls)).toEqual([]);
    expect(modules.some((url) => url.includes('/src/emulator/'))).toBe(true);
    expect(existsSync(join(dir, 'bundled-demo', 'wsmirror-demo.db'))).toBe(true);
  });

  it('a source changed after the build: the sources run, not the stale bundle', async () => {
    const source = join(copy, 'src', 'sync', 'engine.ts');
    const later = new Date(Date.now() + 60_000);
    utimesSync(source, later, later);
    try {
      const { urls } = await trace(['sync'], 'stale-sync', { checkout: copy });
      expect(bundledFiles(urls)).toEqual([]);
      expect(sourceFiles(urls)).toContain(pathToFileURL(source).href);
    } finally {
      const now = new Date(0);
      utimesSync(source, now, now);
    }
  });

  it('no bundle (its manifest gone): the sources run', async () => {
    rmSync(join(copy, BUNDLE, 'manifest.json'));
    const { urls } = await trace(['sync'], 'unbundled-sync', { checkout: copy });
    expect(bundledFiles(urls)).toEqual([]);
    expect(sourceFiles(urls)).toContain(pathToFileURL(join(copy, 'src', 'cli', 'main.ts')).href);
  });
});
