import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts `./bin/wsmirror emulator …` as a real process and waits for its `listening on` line. */
function startCli(args: string[], extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  // The script's shebang finds `node` on PATH: put this very Node first.
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...extraEnv };
  const child = spawn('./bin/wsmirror', ['emulator', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk) => (err += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s; stderr: ${err}`)), 20_000);
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening; stderr: ${err}`));
    });
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

describe('wsmirror emulator (real process)', () => {
  let running: ChildProcess | undefined;
  afterEach(() => {
    if (running && running.exitCode === null) running.kill('SIGKILL');
    running = undefined;
  });

  it('prints its URL, serves the API with the given key, and exits 0 on SIGTERM', async () => {
    const { child, url } = await startCli(['--port', '0', '--api-key', 'dev']);
    running = child;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+$/);
    const ok = await fetch(`${url}/api/v1/workspace/demo00000001`, { headers: { authorization: 'Bearer dev' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { name: 'Demo workspace', modules: [] } });
    const denied = await fetch(`${url}/api/v1/workspace/demo00000001`);
    expect(denied.status).toBe(401);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
  });

  it('on SIGTERM answers the request in flight, then exits 0 at once, though a client keeps its connections alive', async () => {
    const { child, url } = await startCli(['--port', '0', '--api-key', 'dev', '--admin-token', 'adm']);
    running = child;
    const { Agent, request } = await import('undici');
    // A daemon's client: keep-alive connections, kept long after each answer.
    const agent = new Agent({ connections: 4, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
    try {
      const get = (path: string, token = 'dev') => request(`${url}${path}`, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } });
      const idle = await get('/api/v1/workspace/demo00000001');
      expect(idle.statusCode).toBe(200);
      await idle.body.dump();
      const slow = await request(`${url}/_emulator/faults`, {
        dispatcher: agent, method: 'PUT', headers: { authorization: 'Bearer adm', 'content-type': 'application/json' },
        body: JSON.stringify({ latencyMs: 1500 }),
      });
      expect(slow.statusCode, await slow.body.text()).toBe(200);
      // A request in flight when the signal comes, on a connection of its own.
      const inFlight = get('/api/v1/workspace/demo00000001');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = Date.now();
      child.kill('SIGTERM');
      const answered = await inFlight;
      expect(answered.statusCode).toBe(200);
      expect(await answered.body.json()).toEqual({ data: { name: 'Demo workspace', modules: [] } });
      expect(await exitOf(child)).toBe(0);
      // The 1.5 s of latency, and not the server's keep-alive timeout (5 s) on top of it.
      expect(Date.now() - signalled).toBeLessThan(3_500);
    } finally {
      await agent.destroy();
    }
  });

  it('on SIGTERM cuts a request that is not answered within 5 s, and exits 0', async () => {
    const { child, url } = await startCli(['--port', '0', '--api-key', 'dev', '--admin-token', 'adm']);
    running = child;
    const slow = await fetch(`${url}/_emulator/faults`, {
      method: 'PUT', headers: { authorization: 'Bearer adm', 'content-type': 'application/json' }, body: JSON.stringify({ latencyMs: 30_000 }),
    });
    expect(slow.status).toBe(200);
    const inFlight = fetch(`${url}/api/v1/workspace/demo00000001`, { headers: { authorization: 'Bearer dev' } }).then(() => 'answered', () => 'cut');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalled = Date.now();
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    expect(await inFlight).toBe('cut');
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(9_000);
  }, 30_000);

  it('loads --seed, takes --workspace-id and --admin-token', async () => {
    const { child, url } = await startCli([
      '--port', '0', '--api-key', 'dev', '--workspace-id', 'acme00000042', '--admin-token', 'adm',
      '--seed', 'config/emulator-seed.example.json',
    ]);
    running = child;
    const ws = await fetch(`${url}/api/v1/workspace/acme00000042`, { headers: { authorization: 'Bearer dev' } });
    expect(((await ws.json()) as any).data.name).toBe('Northwind Studio');
    const clock = await fetch(`${url}/_emulator/clock`, { headers: { authorization: 'Bearer adm' } });
    expect(clock.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
  });

  it('takes seed fields without labels, labelled by their names; the API still requires them on a field create, and says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsmirror-seed-'));
    const seed = join(dir, 'seed.json');
    writeFileSync(seed, JSON.stringify({ modules: [{ name: 'crm', tables: [{ name: 'people', fields: [
      { name: 'x', type: 'string' }, { name: 'y', type: 'number', labels: { '': 'Why' } },
    ] }] }] }));
    try {
      const { child, url } = await startCli(['--port', '0', '--api-key', 'dev', '--workspace-id', 'acme00000042', '--seed', seed]);
      running = child;
      const base = `${url}/api/v1/workspace/acme00000042`;
      const headers = { authorization: 'Bearer dev', 'content-type': 'application/json' };
      const ws = (await (await fetch(base, { headers })).json()) as any;
      expect(ws.data.modules[0].tables[0].fields.map((f: any) => [f.name, f.labels])).toEqual([['x', { '': 'x' }], ['y', { '': 'Why' }]]);
      const refused = await fetch(`${base}/modules/crm/tables/people/fields`, { method: 'POST', headers, body: JSON.stringify({ name: 'z', type: 'string' }) });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(await refused.json())).toContain('body.labels: required: an object of locale key to label, e.g. {\\"\\": \\"Name\\"}');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes keys that contain "=": a key may end in base64 padding, and grants follow the last "="', async () => {
    const { child, url } = await startCli([
      '--port', '0', '--admin-token', 'adm',
      '--api-key', 'c2VjcmV0a2V5===all', // the key c2VjcmV0a2V5==, every grant
      '--api-key', 'bm9ncmFudA==', // the key bm9ncmFudA=, without grants (KEY=)
      '--api-key', 'a=b=none', // the key a=b, without grants
      '--api-key', 'cGFkZGVk===schema:manage-permissions', // the key cGFkZGVk==
    ]);
    running = child;
    const as = (key: string, method = 'GET', path = '', body?: unknown) =>
      fetch(`${url}/api/v1/workspace/demo00000001${path}`, {
        method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await as('c2VjcmV0a2V5==')).status).toBe(200);
    for (const key of ['c2VjcmV0a2V5=', 'c2VjcmV0a2V5', 'c2VjcmV0a2V5===all', 'bm9ncmFudA==', 'a', 'a=b=none', 'cGFkZGVk===schema:manage-permissions']) expect((await as(key)).status, key).toBe(401);
    await fetch(`${url}/_emulator/modules`, { method: 'POST', headers: { authorization: 'Bearer adm', 'content-type': 'application/json' }, body: '{"name":"m"}' });
    expect((await as('c2VjcmV0a2V5==', 'POST', '/modules/m/tables', { name: 't' })).status).toBe(201);
    const guarded = (name: string) => ({ name, type: 'string', labels: { '': name }, canRead: 'true' });
    expect((await as('c2VjcmV0a2V5==', 'POST', '/modules/m/tables/t/fields', guarded('f1'))).status).toBe(201);
    expect((await as('cGFkZGVk==', 'POST', '/modules/m/tables/t/fields', guarded('f2'))).status).toBe(201);
    expect((await as('a=b', 'POST', '/modules/m/tables/t/fields', guarded('f3'))).status).toBe(403);
    expect((await as('bm9ncmFudA=', 'POST', '/modules/m/tables/t/fields', guarded('f4'))).status).toBe(403);
  });

  it.each([
    [['--api-key', 'dev', '--api-key', 'sekrit=role:admn'], '--api-key (the 2nd): unknown grant "role:admn"'],
    [['--api-key', 'sekrit=xyzzy'], '--api-key (the 1st): the text after the last "=" is not a list of grants'],
    [['--api-key', 'sekrit=all,role:admin'], '--api-key (the 1st): "all" and "none" stand alone'],
    [['--api-key', '==='], '--api-key (the 1st): the key is empty'],
    [['--api-key', 'sekrit=schema:manage-permissions,records:read'], '--api-key (the 1st): unknown grant "records:read"'],
    [['--api-key', 'sekrit=role:admin,role:editor'], '--api-key (the 1st): two roles (role:admin, role:editor)'],
    [['--api-key', 'sek rit'], '--api-key (the 1st): the key contains whitespace'],
    [['--api-key', '=role:admin'], '--api-key (the 1st): the key is empty'],
  ])('a bad --api-key is a usage error (exit 2) naming the flag, never the key: %j', async (args, message) => {
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    const child = spawn('./bin/wsmirror', ['emulator', '--port', '0', ...args], { cwd: ROOT, env });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.stdout.on('data', () => child.kill('SIGKILL')); // it started: the flag was taken
    expect(await exitOf(child)).toBe(2);
    expect(err).toContain(message);
    expect(err).not.toContain('sekrit');
    expect(err).not.toContain('sek rit');
    expect(err).not.toContain('xyzzy');
  });

  it('a bad seed exits 78 with the place at fault on stderr', async () => {
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    const child = spawn('./bin/wsmirror', ['emulator', '--port', '0', '--seed', 'package.json'], { cwd: ROOT, env });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    expect(await exitOf(child)).toBe(78);
    expect(err).toMatch(/seed: unknown propert/);
  });

  // Any local user reads a process's command line (/proc/PID/cmdline), not its environment nor
  // a file of mode 0600: the keys and the admin token can be given there instead of as flags.
  describe('keys and admin token from files or the environment, not on the command line', () => {
    const status = async (url: string, path: string, secret: string) =>
      (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${secret}` } })).status;
    const workspace = '/api/v1/workspace/demo00000001';
    const admin = '/_emulator/reset';
    const commandLine = (child: ChildProcess) => readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');

    it('--api-key-file (one key a line, grants as --api-key takes them) and --admin-token-file', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wsmirror-emu-keys-'));
      try {
        writeFileSync(join(dir, 'keys'), '# keys of the test\nfile-key-all\n\nfile-key-none=\n');
        writeFileSync(join(dir, 'admin'), 'file-admin-token\n');
        chmodSync(join(dir, 'keys'), 0o600);
        chmodSync(join(dir, 'admin'), 0o600);
        const { child, url, stderr } = await startCli(['--port', '0', '--api-key-file', join(dir, 'keys'), '--admin-token-file', join(dir, 'admin')]);
        running = child;
        expect(await status(url, workspace, 'file-key-all')).toBe(200);
        expect(await status(url, workspace, 'file-key-none')).toBe(200);
        expect(await status(url, workspace, 'nope')).toBe(401);
        expect((await fetch(`${url}${admin}`, { method: 'POST', headers: { authorization: 'Bearer file-admin-token' } })).status).toBeLessThan(300);
        expect(commandLine(child)).not.toMatch(/file-key|file-admin/);
        expect(stderr()).not.toMatch(/file-key|file-admin|no --api-key/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('WSMIRROR_EMULATOR_API_KEYS (separated by whitespace) and WSMIRROR_EMULATOR_ADMIN_TOKEN, with --api-key beside them', async () => {
      const { child, url } = await startCli(['--port', '0', '--api-key', 'flag-key'], {
        WSMIRROR_EMULATOR_API_KEYS: 'env-key-one\nenv-key-two=role:user', WSMIRROR_EMULATOR_ADMIN_TOKEN: 'env-admin-token',
      });
      running = child;
      for (const key of ['flag-key', 'env-key-one', 'env-key-two']) expect(await status(url, workspace, key)).toBe(200);
      expect((await fetch(`${url}${admin}`, { method: 'POST', headers: { authorization: 'Bearer env-admin-token' } })).status).toBeLessThan(300);
      expect(commandLine(child)).not.toMatch(/env-key|env-admin/);
    });

    it('warns of a key file other users can read, naming it, never a key', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wsmirror-emu-keys-'));
      try {
        writeFileSync(join(dir, 'keys'), 'open-file-key\n');
        chmodSync(join(dir, 'keys'), 0o644);
        const { child, url, stderr } = await startCli(['--port', '0', '--api-key-file', join(dir, 'keys')]);
        running = child;
        expect(await status(url, workspace, 'open-file-key')).toBe(200);
        expect(stderr()).toContain(`--api-key-file ${join(dir, 'keys')} is readable by other users (mode 0644): chmod 600 it`);
        expect(stderr()).not.toContain('open-file-key');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
