import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, peakRss, runWsmirror, type RunResult } from '../helpers/processes.ts';

/**
 * `WSMIRROR_API_KEY_FILE` through a real `wsmirror sync`: the file is read with a bound (a key
 * is short; `/dev/zero` never ends), and a key file other users can read is reported, never the
 * key itself.
 */
describe('wsmirror sync with WSMIRROR_API_KEY_FILE', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-key-file-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A process growing past this is reading without a bound: killed before it hurts the machine. */
  const MEMORY_CEILING = 400 * 1024 ** 2;

  function sync(keyFile: string, mirror: string): Promise<RunResult> {
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, mirror)}` }, { WSMIRROR_API_KEY: '', WSMIRROR_API_KEY_FILE: keyFile });
    let watchdog: NodeJS.Timeout | undefined;
    return runWsmirror(['sync'], env, {
      killAfterMs: 20_000,
      onSpawn: (kill, child) => {
        watchdog = setInterval(() => {
          if ((peakRss(child.pid!) ?? 0) > MEMORY_CEILING) kill();
        }, 20);
        child.once('exit', () => clearInterval(watchdog));
      },
    });
  }

  it('refuses /dev/zero with exit 78 naming the file, in bounded memory', async () => {
    const run = await sync('/dev/zero', 'zero.db');
    expect(run.code, `signal ${run.signal}, peak ${run.peakRssBytes}`).toBe(78);
    expect(run.stderr).toContain('WSMIRROR_API_KEY_FILE');
    expect(run.stderr).toContain('/dev/zero');
    expect(run.stderr).toContain('is larger than 4KB');
    expect(existsSync(join(dir, 'zero.db'))).toBe(false);
  });

  it('refuses a file larger than a key could be with exit 78', async () => {
    const big = join(dir, 'big-key');
    writeFileSync(big, 'k'.repeat(1024 * 1024), { mode: 0o600 });
    const run = await sync(big, 'big.db');
    expect(run.code).toBe(78);
    expect(run.stderr).toContain(big);
    expect(run.stderr).not.toContain('kkkkkkkk');
  });

  it('warns, without the key, when other users can read the key file; stays quiet for mode 0600', async () => {
    const open = join(dir, 'open-key');
    writeFileSync(open, `${emu.apiKey}\n`);
    chmodSync(open, 0o644);
    const warned = await sync(open, 'open.db');
    expect(warned.code, warned.stderr).toBe(0);
    const output = warned.stdout + warned.stderr;
    expect(output).toContain(`the API key file ${open} is readable by other users (mode 0644)`);
    expect(output).not.toContain(emu.apiKey);

    // Writable by others is as bad: another user could put a key of theirs there.
    const writable = join(dir, 'writable-key');
    writeFileSync(writable, `${emu.apiKey}\n`);
    chmodSync(writable, 0o620);
    const alsoWarned = await sync(writable, 'writable.db');
    expect(alsoWarned.stdout + alsoWarned.stderr).toContain(`the API key file ${writable} is writable by other users (mode 0620)`);

    const closed = join(dir, 'closed-key');
    writeFileSync(closed, `${emu.apiKey}\n`, { mode: 0o600 });
    chmodSync(closed, 0o600);
    const quiet = await sync(closed, 'closed.db');
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stdout + quiet.stderr).not.toMatch(/(readable|writable) by other users/);
  });
});
