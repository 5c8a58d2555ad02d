import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';

/**
 * Each configuration rule lives once, in the module it configures: what the configuration
 * accepts is what that module then does. Real processes, so the check and the use are the ones
 * a user gets.
 */
describe('configuration rules are the modules\' own', () => {
  let emu: RunningEmulator;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-config-rules-'));

  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('sqlite://data/m.db names data/m.db under the working directory, for sync and for status alike', async () => {
    mkdirSync(join(cwd, 'data'), { recursive: true });
    const env = daemonEnv(emu, { url: 'sqlite://data/m.db' });
    const sync = await runWsmirror(['sync'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    expect(existsSync(join(cwd, 'data', 'm.db'))).toBe(true);
    const status = await runWsmirror(['status', '--json'], { WSMIRROR_MIRROR_URL: 'sqlite://data/m.db' }, { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).mirror).toBe(`sqlite:${join(cwd, 'data', 'm.db')}`);
  });
});
