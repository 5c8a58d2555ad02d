import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A SQLite mirror that other local users may write: whoever writes the file writes its outbox,
 * whose entries go upstream with the daemon's API key. Every command that opens it says so,
 * naming the file or directory and the chmod to run; check fails on it. Real processes.
 */
describe('a SQLite mirror other users may write (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-mode-'));
  const mirrorDir = join(dir, 'mirror');
  const file = join(mirrorDir, 'm.db');
  const env = () => daemonEnv(emu, { url: `sqlite:${file}` }, { WSMIRROR_LOG_LEVEL: 'warn' });
  const run = (args: string[]) => runWsmirror(args, env(), { cwd: dir });

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    chmodSync(dir, 0o755);
    mkdirSync(mirrorDir, { mode: 0o755 });
    chmodSync(mirrorDir, 0o755);
    const made = await run(['sync']);
    expect(made.code, made.stderr).toBe(0);
    chmodSync(file, 0o644);
    const quiet = await run(['sync']);
    expect(quiet.stdout + quiet.stderr).not.toMatch(/other users/);
    expect((await run(['check'])).code).toBe(0);
    expect((await run(['status'])).code).toBe(0);
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a file of mode 0666: sync warns and check fails, naming the file and chmod go-w', async () => {
    chmodSync(file, 0o666);
    try {
      const sync = await run(['sync']);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout + sync.stderr).toContain(`the SQLite mirror ${file} is writable by other users (mode 0666)`);
      expect(sync.stdout + sync.stderr).toContain(`chmod go-w ${file}`);
      const check = await run(['check']);
      expect(check.code, check.stdout).toBe(78);
      expect(check.stdout).toMatch(new RegExp(`^FAIL mirror: .*writable by other users \\(mode 0666\\)`, 'm'));
      // status (which only reads) lists it among what needs attention, and exits 1.
      const status = await run(['status']);
      expect(status.code, status.stderr).toBe(1);
      expect(status.stdout).toMatch(new RegExp(`needs attention:[\\s\\S]*the SQLite mirror ${file} is writable by other users`));
      const json = await run(['status', '--json']);
      expect(JSON.parse(json.stdout).attention).toContainEqual(expect.stringContaining(`chmod go-w ${file}`));
    } finally {
      chmodSync(file, 0o644);
    }
  }, 60_000);

  it('a directory anyone may write (mode 0777): sync warns and check fails, naming the directory', async () => {
    chmodSync(mirrorDir, 0o777);
    try {
      const sync = await run(['sync']);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout + sync.stderr).toContain(`the directory ${mirrorDir} of the SQLite mirror is writable by other users (mode 0777)`);
      expect(sync.stdout + sync.stderr).toContain(`chmod go-w ${mirrorDir}`);
      const check = await run(['check']);
      expect(check.code, check.stdout).toBe(78);
      expect(check.stdout).toContain(`the directory ${mirrorDir} of the SQLite mirror is writable by other users`);
    } finally {
      chmodSync(mirrorDir, 0o755);
    }
  }, 60_000);
});
