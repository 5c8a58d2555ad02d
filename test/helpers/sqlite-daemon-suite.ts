import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startEmulator, type RunningEmulator } from './emulator.ts';
import { startWsmirrorKilledAfterEach } from './live-daemons.ts';
import { daemonEnv } from './processes.ts';
import { field } from './schema.ts';
import { UpstreamWorkspace } from './workspace.ts';

/**
 * Registers, in the enclosing describe, what suites of `wsmirror run` on SQLite mirrors share: an
 * emulator with crm.people (holding `names`), a temporary directory, and daemons killed after
 * each test. `startRun` starts a daemon on a mirror file, by default a new one of that directory.
 */
export function sqliteDaemonSuite(prefix: string, names: readonly string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  let emu: RunningEmulator;
  let n = 0;
  const startWsmirror = startWsmirrorKilledAfterEach();

  beforeAll(async () => {
    emu = await startEmulator();
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    if (names.length > 0) await upstream.createRecords('crm', 'people', names.map((name) => ({ name })));
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const suite = {
    dir,
    /** The emulator's workspace, to read or change upstream. */
    upstream: () => new UpstreamWorkspace(emu),
    /** The environment of a command on the mirror at `file`, with these settings. */
    env(file: string, settings: Record<string, string> = {}) {
      return daemonEnv(emu, { url: `sqlite:${file}` }, settings);
    },
    /** `wsmirror run` on the mirror at `file` (by default a new file) with these settings; its file and environment. */
    startRun(settings: Record<string, string>, file = join(dir, `m${++n}.db`)) {
      const env = suite.env(file, { WSMIRROR_LOG_LEVEL: 'info', ...settings });
      const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000, cwd: dir });
      return { file, env, daemon };
    },
  };
  return suite;
}
