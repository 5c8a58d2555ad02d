import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { freePort } from '../helpers/free-port.ts';
import { countLogLines, daemonEnv, runWsmirror, spawnEmulator, startWsmirror, stopProcess } from '../helpers/processes.ts';

describe('wsmirror run (real process): start-up logs', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('warns about misspelt WSMIRROR_* variables and logs the configuration with the key hidden', async () => {
    const res = await runWsmirror(['run'], daemonEnv(emu, { url: `sqlite:${join(dir, 'm.db')}` }, {
      WSMIRROR_LOG_LEVEL: 'debug',
      WSMIRROR_SCHEDUEL: '5s',
    }), { cwd: dir, killAfterMs: 20_000, killWhen: (stdout) => stdout.includes('daemon started') });
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const warning = lines.find((l) => l['level'] === 'warn' && String(l['msg']).includes('unknown environment variables'));
    expect(warning, res.stdout).toMatchObject({ variables: ['WSMIRROR_SCHEDUEL'] });
    const configuration = lines.find((l) => l['msg'] === 'configuration');
    expect(configuration, res.stdout).toMatchObject({ config: { upstream: { baseUrl: emu.url, workspaceId: emu.workspaceId } } });
    expect(res.stdout).not.toContain(emu.apiKey);
  });
});

describe('wsmirror run (real process): the daemon keeps the mirror current', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-loop-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cycles on its schedule, reports readiness and metrics, and exits 0 on SIGTERM', async () => {
    const { UpstreamWorkspace } = await import('../helpers/workspace.ts');
    const { default: Database } = await import('better-sqlite3');
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('shop');
    await upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    await upstream.createRecords('shop', 'items', [{ qty: 1 }]);
    await upstream.createTable('shop', 'old', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    const dbFile = join(dir, 'run.db');
    const countRows = () => {
      try {
        const db = new Database(dbFile, { readonly: true });
        try {
          return (db.prepare('SELECT count(*) AS n FROM "shop__items"').get() as { n: number }).n;
        } finally {
          db.close();
        }
      } catch {
        return 0;
      }
    };
    const probes: { ready: number[]; metrics: string } = { ready: [], metrics: '' };
    // Below the ephemeral range (32768+) where port-0 listeners of other suites land. The log
    // says whether the daemon listens there: a failure to bind (or to cycle) fails with its output.
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const daemon = startWsmirror(
      ['run'],
      daemonEnv(emu, { url: `sqlite:${dbFile}` }, { WSMIRROR_HTTP_PORT: String(port), WSMIRROR_SCHEDULE: '1s', WSMIRROR_LOG_LEVEL: 'info' }),
      { cwd: dir, killAfterMs: 60_000 },
    );
    const stop = () => daemon.child.kill('SIGTERM');
    const run = daemon.exited;
    const base = `http://127.0.0.1:${port}`;
    await daemon.waitFor('the operations endpoints', (stdout) => stdout.includes(`"url":"${base}","msg":"serving /healthz`));
    const until = async (check: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 300 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100));
    };
    const readyz = async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status ?? 0;
    await daemon.waitFor('the first cycle', (stdout) => /"msg":"cycle done/.test(stdout));
    await until(async () => (await readyz()) === 200);
    probes.ready.push(await readyz());
    expect(countRows()).toBe(1);

    await upstream.createRecords('shop', 'items', [{ qty: 2 }, { qty: 3 }]);
    await until(() => countRows() === 3);
    expect(countRows()).toBe(3);
    // The rows commit before their cycle ends and is counted: wait for the count, not a moment.
    const cycles = /wsmirror_cycles_total\{result="success"\} ([2-9]|\d{2,})/;
    await until(async () => cycles.test(probes.metrics = await (await fetch(`${base}/metrics`)).text()));

    // A table that leaves the mirror stops counting for lag and readiness.
    const scrape = async () => (await fetch(`${base}/metrics`)).text();
    const lagOfOld = /wsmirror_table_lag_seconds\{table="shop.old"\}/;
    expect(await scrape()).toMatch(lagOfOld);
    await upstream.deleteTable('shop', 'old');
    await until(async () => !lagOfOld.test(await scrape()));
    expect(await scrape()).not.toMatch(lagOfOld);
    expect(await readyz()).toBe(200);
    stop();
    const result = await run;
    expect(probes.ready).toEqual([200]);
    expect(probes.metrics).toMatch(/wsmirror_rows_applied_total\{[^}]*table="shop.items"[^}]*\} [1-9]/);
    expect(probes.metrics).toMatch(cycles);
    expect(result.code, result.stderr).toBe(0);
  }, 60_000);
});

describe('wsmirror run (real process): where the operations endpoints listen', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-host-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An address of this machine that is not loopback: where a remote client would connect. */
  const external = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && !a.internal && a.family === 'IPv4')?.address;

  /** Starts `run` on a free port, waits until loopback answers, then tries the external address. */
  async function probe(extra: Record<string, string>): Promise<{ loopback: number; external: number | 'refused' }> {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    let stop: () => void = () => undefined;
    const run = runWsmirror(['run'], daemonEnv(emu, { url: `sqlite:${join(dir, `${port}.db`)}` }, { WSMIRROR_HTTP_PORT: String(port), ...extra }), {
      cwd: dir, killAfterMs: 30_000, onSpawn: (_kill, child) => (stop = () => child.kill('SIGTERM')),
    });
    const status = async (host: string) => (await fetch(`http://${host}:${port}/healthz`).catch(() => undefined))?.status;
    let loopback: number | undefined;
    for (let i = 0; i < 200 && loopback === undefined; i++) {
      loopback = await status('127.0.0.1');
      if (loopback === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    const outside = external === undefined ? undefined : await status(external);
    stop();
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    return { loopback: loopback ?? 0, external: outside ?? 'refused' };
  }

  it('listens on loopback only by default', async () => {
    // Without an address other than loopback there is nothing to show; never pass silently.
    expect(external, 'this machine has no non-loopback IPv4 address to probe').toBeDefined();
    expect(await probe({})).toEqual({ loopback: 200, external: 'refused' });
  }, 40_000);

  it('listens on every interface when WSMIRROR_HTTP_HOST says so', async () => {
    expect(await probe({ WSMIRROR_HTTP_HOST: '0.0.0.0' })).toEqual({ loopback: 200, external: 200 });
  }, 40_000);
});

describe('wsmirror run (real process): SIGHUP', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-hup-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs that the configuration is read at start only, keeps running, and exits 0 on SIGTERM', async () => {
    let child: import('node:child_process').ChildProcess | undefined;
    let out = '';
    const run = runWsmirror(['run'], daemonEnv(emu, { url: `sqlite:${join(dir, 'm.db')}` }, { WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_SCHEDULE: '1s' }), {
      cwd: dir, killAfterMs: 30_000,
      onSpawn: (_kill, spawned) => (child = spawned),
      killWhen: (stdout) => ((out = stdout), false),
    });
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
    };
    await until(() => out.includes('daemon started'));
    child!.kill('SIGHUP');
    await until(() => out.includes('SIGHUP'));
    // Still running a while later: a cycle or two more.
    await new Promise((r) => setTimeout(r, 1500));
    expect(child!.exitCode, out).toBeNull();
    expect(child!.signalCode, out).toBeNull();
    const hup = out.split('\n').filter((l) => l.includes('SIGHUP')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(hup, out).toHaveLength(1);
    expect(String(hup[0]!['msg'])).toMatch(/configuration is read at start only.*restart/);
    child!.kill('SIGTERM');
    const result = await run;
    expect({ code: result.code, signal: result.signal }, result.stderr).toEqual({ code: 0, signal: null });
  }, 40_000);
});

describe('wsmirror run (real process): an upstream not up yet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-wait-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for it, trying again at each cycle, and syncs once it answers', async () => {
    const port = await freePort();
    const upstream = { url: `http://127.0.0.1:${port}`, apiKey: 'proc-key', workspaceId: 'proc00000001' };
    const daemon = startWsmirror(['run'], daemonEnv(upstream, { url: `sqlite:${join(dir, 'm.db')}` }, {
      WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_SCHEDULE: '500ms', WSMIRROR_UPSTREAM_RETRIES: '0',
    }), { cwd: dir, killAfterMs: 60_000 });
    try {
      await daemon.waitFor('two failed cycles', (stdout) => countLogLines(stdout, /^sync cycle failed: cannot reach upstream/) >= 2);
      const emulator = await spawnEmulator({ args: ['--port', String(port)] });
      try {
        await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      } finally {
        await emulator.stop();
      }
      await stopProcess(daemon.child);
      const result = await daemon.exited;
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await stopProcess(daemon.child, 'SIGKILL');
    }
  }, 60_000);
});
