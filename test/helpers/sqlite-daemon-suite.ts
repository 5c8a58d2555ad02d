import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startEmulator, type RunningEmulator } from './emulator.ts';
import { daemonEnv, startWsmirror, stopProcess, type LiveWsmirror } from './processes.ts';
import { field } from './schema.ts';
import { UpstreamWorkspace } from './workspace.ts';

/**
 * Registers, in the enclosing describe, what suites of `wsmirror run` on SQLite mirrors share: an
 * emulator with crm.people (holding `names`), a temporary directory, and daemons killed after
 * each test. `startRun` starts a daemon on a new mirror file of that directory.
 */
export function sqliteDaemonSuite(prefix: string, names: readonly string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  let emu: RunningEmulator;
  let n = 0;
  const live: LiveWsmirror[] = [];

  beforeAll(async () => {
    emu = await startEmulator();
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    if (names.length > 0) await upstream.createRecords('crm', 'people', names.map((name) => ({ name })));
  });
  afterEach(async () => {
    for (const daemon of live.splice(0)) await stopProcess(daemon.child, 'SIGKILL');
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    dir,
    /** `wsmirror run` on a new mirror file with these settings; its file and environment. */
    startRun(settings: Record<string, string>) {
      const file = join(dir, `m${++n}.db`);
      const env = daemonEnv(emu, { url: `sqlite:${file}` }, { WSMIRROR_LOG_LEVEL: 'info', ...settings });
      const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000, cwd: dir });
      live.push(daemon);
      return { file, env, daemon };
    },
  };
}
