import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { freePort } from '../helpers/free-port.ts';
import { WSMIRROR_BIN, daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * Every error names the setting to fix, as a user sees it: real `wsmirror` processes, their exit
 * codes, stderr and logs.
 */

/** Forwards to the emulator; while `refuse` is set it sends a wrong key, so upstream answers 401. */
async function startKeySwappingProxy(target: string): Promise<{ url: string; refuse: boolean; close(): Promise<void> }> {
  const proxy = { url: '', refuse: false, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method ?? 'GET',
        headers: {
          authorization: proxy.refuse ? 'Bearer wrong-key-0000' : String(req.headers.authorization ?? ''),
          'content-type': 'application/json',
        },
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  return proxy;
}

describe('errors name the setting to fix (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-errors-'));
  const mirror = (name: string) => ({ url: `sqlite:${join(dir, name)}` });

  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a refused key names WSMIRROR_API_KEY and WSMIRROR_API_KEY_FILE', async () => {
    const res = await runWsmirror(['sync'], daemonEnv(emu, mirror('401.db'), { WSMIRROR_API_KEY: 'rejected-key-0123' }), { cwd: dir });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('401');
    expect(res.stderr).toContain('WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE');
    expect(res.stderr).toContain('from WSMIRROR_API_KEY');
    expect(res.stderr).not.toContain('Bearer');
    expect(res.stderr).not.toContain('rejected-key-0123');
  });

  it('import: a refused key names WSMIRROR_API_KEY and WSMIRROR_API_KEY_FILE too', async () => {
    const csv = join(dir, 'rows.csv');
    writeFileSync(csv, 'name\nx\n');
    const res = await runWsmirror(['import', 'crm.deals', csv], daemonEnv(emu, mirror('import.db'), { WSMIRROR_API_KEY: 'rejected-key-0123' }), { cwd: dir });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE');
    expect(res.stderr).not.toContain('rejected-key-0123');
  });

  it('a page over upstream.maxResponseBytes names the settings that fix it', async () => {
    const own = await startEmulator();
    let res: Awaited<ReturnType<typeof runWsmirror>>;
    try {
      const ws = new UpstreamWorkspace(own);
      await ws.createModule('crm');
      await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
      await ws.createRecords('crm', 'notes', Array.from({ length: 20 }, () => ({ body: 'x'.repeat(200) })));
      res = await runWsmirror(['sync'], daemonEnv(own, mirror('too-large.db'), { WSMIRROR_UPSTREAM_MAX_RESPONSE_BYTES: '2KB' }), { cwd: dir });
    } finally {
      await own.close();
    }
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/response body exceeds the 2048-byte limit/);
    expect(res.stderr).toContain('lower sync.pageSize (WSMIRROR_SYNC_PAGE_SIZE), or raise upstream.maxResponseBytes (WSMIRROR_UPSTREAM_MAX_RESPONSE_BYTES)');
  });

  it('a workspace answer too large for the heap is refused, naming the heap setting, instead of crashing the process', async () => {
    // 600,000 tables, 41 MB of JSON. The body bound is raised, so only the heap stands in the
    // way: the launcher gives the process the service's 160 MB, which parsing this would overrun.
    const tables = Array.from({ length: 600_000 }, (_, i) => ({ id: `tbl${String(i).padStart(9, '0')}`, name: `t${i}`, hasHistory: true, fields: [] }));
    const body = JSON.stringify({ data: { name: 'huge', modules: [{ id: 'mod000000001', name: 'm', tables }] } });
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.endsWith(`/workspace/${emu.workspaceId}`) ? body : '{"data":[],"meta":{"asOf":"2026-01-01T00:00:00.000Z"},"page_info":{"has_more":false,"limit":100,"offset":0}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    let res: Awaited<ReturnType<typeof runWsmirror>>;
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      res = await runWsmirror(['sync'], daemonEnv({ ...emu, url }, mirror('huge-workspace.db'), { WSMIRROR_UPSTREAM_MAX_RESPONSE_BYTES: '100MB' }), { cwd: dir, launcher: true });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).not.toMatch(/heap out of memory|FATAL ERROR/);
    expect(res.stderr).toMatch(/\d+ MB of JSON with \d+ values/);
    expect(res.stderr).toMatch(/more than this process's heap limit of 16\d MB/);
    expect(res.stderr).toContain('NODE_OPTIONS=--max-old-space-size=');
  });

  it('an unreachable upstream names the base URL and WSMIRROR_BASE_URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const res = await runWsmirror(['sync'], daemonEnv({ ...emu, url }, mirror('refused.db'), { WSMIRROR_UPSTREAM_RETRIES: '0' }), { cwd: dir });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`cannot reach upstream at ${url}`);
    expect(res.stderr).toContain('ECONNREFUSED');
    expect(res.stderr).toContain('WSMIRROR_BASE_URL');
  });

  it('a Postgres password holding a space, a slash or an @ is never printed: sync, run, check, check --json', async () => {
    const port = await freePort();
    // The ones that are no URL (a / or a # must be percent-encoded) are shown up to the user only.
    for (const [password, secret] of [['my secret/pw', 'secret'], ['pa ss', 'pa ss'], ['p@ss:w/rd#?%&', 'rd#']] as const) {
      const env = daemonEnv(emu, { url: `postgres://dba_ws:${password}@127.0.0.1:${port}/db` }, { WSMIRROR_LOG_LEVEL: 'debug' });
      for (const args of [['sync'], ['run'], ['check'], ['check', '--json']]) {
        // run waits for a server that cannot be reached: its first failed cycle is enough.
        const res = await runWsmirror(args, env, { cwd: dir, killAfterMs: 30_000, killWhen: (stdout) => stdout.includes('sync cycle failed') });
        expect(res.code, `${args.join(' ')}: ${res.stderr}`).not.toBe(0);
        expect(`${res.stdout}${res.stderr}`, args.join(' ')).toContain('postgres://dba_ws:[Redacted]');
        expect(`${res.stdout}${res.stderr}`, args.join(' ')).not.toContain(secret);
      }
    }
  }, 120_000);

  it('a password in the upstream URL is never printed: check, check --json, a failed sync', async () => {
    const port = await freePort();
    const env = daemonEnv({ ...emu, url: `http://u:pw1234-s3cret@127.0.0.1:${port}` }, mirror('url-password.db'), { WSMIRROR_UPSTREAM_RETRIES: '0' });
    const check = await runWsmirror(['check'], env, { cwd: dir });
    const json = await runWsmirror(['check', '--json'], env, { cwd: dir });
    const sync = await runWsmirror(['sync'], env, { cwd: dir });
    expect([check.code, json.code, sync.code], `${check.stderr}${sync.stderr}`).toEqual([78, 78, 1]);
    for (const res of [check, json, sync]) expect(`${res.stdout}${res.stderr}`).not.toContain('pw1234-s3cret');
    expect(check.stdout).toContain(`FAIL upstream: http://[Redacted]@127.0.0.1:${port}, workspace`);
    expect((JSON.parse(json.stdout) as { upstream: { baseUrl: string } }).upstream.baseUrl).toBe(`http://[Redacted]@127.0.0.1:${port}`);
    expect(sync.stderr).toContain(`cannot reach upstream at http://[Redacted]@127.0.0.1:${port}`);
  });

  it('an unknown workspace names WSMIRROR_WORKSPACE_ID', async () => {
    const res = await runWsmirror(['sync'], daemonEnv({ ...emu, workspaceId: 'nosuchspace1' }, mirror('404.db')), { cwd: dir });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('404');
    expect(res.stderr).toContain('WSMIRROR_WORKSPACE_ID');
  });

  it('a port in use names WSMIRROR_HTTP_PORT and exits 78', async () => {
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const res = await runWsmirror(['run'], daemonEnv(emu, mirror('port.db'), { WSMIRROR_HTTP_PORT: String(port) }), { cwd: dir, killAfterMs: 30_000 });
      expect(res.code, res.stderr).toBe(78);
      expect(res.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(res.stderr).toContain('WSMIRROR_HTTP_PORT');
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('an http.host that does not resolve or is not of this machine names WSMIRROR_HTTP_HOST and its value, not the port, and exits 78', async () => {
    const port = await freePort();
    // Unresolvable (ENOTFOUND, or EAI_AGAIN without a resolver), then a documentation address (EADDRNOTAVAIL).
    for (const host of ['not-a-host.invalid', '192.0.2.1']) {
      const res = await runWsmirror(['run'], daemonEnv(emu, mirror('host.db'), { WSMIRROR_HTTP_PORT: String(port), WSMIRROR_HTTP_HOST: host }), { cwd: dir, killAfterMs: 30_000 });
      expect(res.code, res.stderr).toBe(78);
      expect(res.stderr).toContain(`the host ${host}`);
      expect(res.stderr).toContain('WSMIRROR_HTTP_HOST (http.host)');
      expect(res.stderr).not.toContain('WSMIRROR_HTTP_PORT');
      expect(res.stderr).not.toContain('getaddrinfo');
    }
  });

  it('a misspelt WSMIRROR_* variable gets a suggestion', async () => {
    const res = await runWsmirror(['sync'], daemonEnv(emu, mirror('typo.db'), { WSMIRROR_WORKSPACE_IDD: 'x', WSMIRROR_SCHEDUEL: '5s' }), { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('WSMIRROR_WORKSPACE_IDD (did you mean WSMIRROR_WORKSPACE_ID?)');
    expect(res.stdout).toContain('WSMIRROR_SCHEDUEL (did you mean WSMIRROR_SCHEDULE?)');
  });

  it('run: one line per failing cycle, no stack, and /readyz names the key setting', async () => {
    const proxy = await startKeySwappingProxy(emu.url);
    const port = await freePort();
    let probed: { status: number; body: { reason?: string } } | undefined;
    let refusedAt = 0;
    try {
      const res = await runWsmirror(['run'], daemonEnv({ ...emu, url: proxy.url }, mirror('run.db'), {
        WSMIRROR_HTTP_PORT: String(port), WSMIRROR_SCHEDULE: '200ms', WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_UPSTREAM_RETRIES: '0',
      }), {
        cwd: dir,
        killAfterMs: 60_000,
        onSpawn: (_kill, child) => {
          const lines: string[] = [];
          child.stdout?.on('data', (chunk: Buffer) => {
            lines.push(...chunk.toString().split('\n'));
            // Once the daemon is up and its first cycle succeeded, upstream starts refusing the key.
            if (!proxy.refuse && lines.some((l) => l.includes('"cycle done'))) {
              proxy.refuse = true;
              refusedAt = lines.length;
            }
          });
          const timer = setInterval(async () => {
            const failures = lines.filter((l) => l.includes('"sync cycle failed')).length;
            if (failures < 2 || probed !== undefined) return;
            clearInterval(timer);
            probed = { status: 0, body: {} };
            const answer = await fetch(`http://127.0.0.1:${port}/readyz`);
            probed = { status: answer.status, body: await answer.json() as { reason?: string } };
            child.kill('SIGTERM');
          }, 50);
          child.once('exit', () => clearInterval(timer));
        },
      });
      expect(res.code, res.stderr).toBe(0);
      const failures = res.stdout.split('\n').filter((l) => l.includes('"sync cycle failed'));
      expect(failures.length, res.stdout).toBeGreaterThanOrEqual(2);
      for (const line of failures) {
        const entry = JSON.parse(line) as { level: string; msg: string; stack?: string; err?: unknown };
        expect(entry.level).toBe('error');
        expect(entry.msg).toContain('WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE');
        expect(entry.err).toBeUndefined();
        expect(line).not.toContain('    at ');
      }
      expect(refusedAt).toBeGreaterThan(0);
      expect(probed?.status).toBe(503);
      expect(probed?.body.reason).toContain('WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE');
      expect(JSON.stringify(probed?.body)).not.toContain('Bearer');
      // The stop says what it left.
      expect(res.stdout).toMatch(/"msg":"stopped by SIGTERM[^"]*(nothing was left unfinished|the next run (continues|starts))/);
    } finally {
      await proxy.close();
    }
  });

  it('wsmirror openapi | head ends quietly when the reader closes the pipe', async () => {
    const child = spawn(process.execPath, [WSMIRROR_BIN, 'openapi'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
    // Like `head -c 1`: read one chunk, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
