import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unprivilegedUser } from '../helpers/embedded-postgres.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A SQLite mirror whose directory this user cannot write: SQLite cannot create the -wal and -shm
 * files beside the file, and every command says so, naming the directory. Real processes; under
 * root (whom permissions do not stop) they run as `nobody`, owner of the file and directory.
 */
describe('a SQLite mirror in a read-only directory (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-perm-'));
  const mirrorDir = join(dir, 'mirror');
  const user = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const env = () => ({ ...daemonEnv(emu, { url: `sqlite:${join(mirrorDir, 'm.db')}` }), HOME: dir });

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    chmodSync(dir, 0o755);
    mkdirSync(mirrorDir);
    const made = await runWsmirror(['sync'], env(), { cwd: dir });
    expect(made.code, made.stderr).toBe(0);
    // A mirror without its -wal and -shm (copied, or closed by an older wsmirror): wsmirror keeps
    // them on close, and a command that finds them opens the file without creating any.
    for (const suffix of ['-wal', '-shm']) rmSync(join(mirrorDir, `m.db${suffix}`), { force: true });
    if (user) for (const name of ['', ...readdirSync(mirrorDir)]) chownSync(join(mirrorDir, name), user.uid, user.gid);
    chmodSync(mirrorDir, 0o555);
  });
  afterAll(async () => {
    await emu?.close();
    chmodSync(mirrorDir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  });

  const cannotCreate = `cannot create files in ${mirrorDir} (the -wal and -shm files live beside the mirror)`;

  it('check, status and sync name the directory, and exit 78', async () => {
    const run = (args: string[]) => runWsmirror(args, env(), { cwd: dir, ...(user ? { user } : {}) });
    const check = await run(['check']);
    expect(check.code, check.stderr).toBe(78);
    expect(check.stdout).toMatch(/^FAIL mirror: .*/m);
    expect(check.stdout).toContain(cannotCreate);
    for (const command of ['status', 'sync']) {
      const res = await run([command]);
      expect(res.code, `${command}: ${res.stderr}`).toBe(78);
      expect(res.stderr).toContain(cannotCreate);
    }
  }, 60_000);
});

/**
 * A SQLite mirror file this user cannot write, in a directory it can: SQLite opens such a file
 * read-only without a word, and each write would fail with "attempt to write a readonly
 * database", naming no file. Commands that write refuse it as they open it, naming the file.
 */
describe('a read-only SQLite mirror file in a writable directory (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-ro-file-'));
  const mirrorDir = join(dir, 'mirror');
  const file = join(mirrorDir, 'm.db');
  const user = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const env = () => ({ ...daemonEnv(emu, { url: `sqlite:${file}` }), HOME: dir });

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'notes', [{ body: 'first' }]);
    chmodSync(dir, 0o755);
    mkdirSync(mirrorDir);
    const made = await runWsmirror(['sync'], env(), { cwd: dir });
    expect(made.code, made.stderr).toBe(0);
    await ws.createRecords('crm', 'notes', [{ body: 'second' }]);
    if (user) for (const name of ['', ...readdirSync(mirrorDir)]) chownSync(join(mirrorDir, name), user.uid, user.gid);
    chmodSync(file, 0o444);
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sync and run exit 78 naming the file and what to do, and change nothing', async () => {
    const before = readFileSync(file);
    for (const command of ['sync', 'run']) {
      const res = await runWsmirror([command], env(), { cwd: dir, killAfterMs: 30_000, ...(user ? { user } : {}) });
      expect(res.code, `${command}: ${res.stdout}\n${res.stderr}`).toBe(78);
      expect(res.stderr).toContain(`this user cannot write ${file}`);
      expect(res.stderr).toMatch(/chmod u\+w|chown/);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  }, 60_000);
});

/**
 * A SQLite mirror in a directory that does not exist: wsmirror does not create directories (a
 * typo in `mirror.url` would otherwise leave a tree of them), so every command names the missing
 * directory instead of a permission it does not lack or the ENOENT of a lock file.
 */
describe('a SQLite mirror in a directory that does not exist (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-nodir-'));
  const missing = join(dir, 'data', 'mirrors');
  const env = () => ({ ...daemonEnv(emu, { url: 'sqlite:data/mirrors/m.db' }), HOME: dir });

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('check and sync name the missing directory, exit 78 and create nothing', async () => {
    const said = `the directory ${missing} does not exist`;
    const check = await runWsmirror(['check'], env(), { cwd: dir });
    expect(check.code, check.stderr).toBe(78);
    expect(check.stdout).toMatch(/^FAIL mirror: .*/m);
    expect(check.stdout).toContain(said);
    expect(check.stdout).not.toContain('cannot create files');
    for (const command of ['sync', 'run']) {
      const res = await runWsmirror([command], env(), { cwd: dir });
      expect(res.code, `${command}: ${res.stderr}`).toBe(78);
      expect(res.stderr).toContain(said);
      expect(res.stderr).not.toContain('ENOENT');
    }
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);
});
