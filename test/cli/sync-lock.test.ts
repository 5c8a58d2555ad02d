import { existsSync, rmSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * One process syncs a mirror at a time: two would read the same local inserts and create each
 * record upstream twice. `run` and `sync` hold the mirror's sync lock for as long as they run;
 * the lock goes with the process, however it ends.
 */
forEachDialect('one syncing process per mirror (real processes)', (dialect) => {
  let emu: RunningEmulator | undefined;
  afterEach(async () => emu?.close());

  it('refuses a second run or sync while a daemon runs (exit 78, naming the mirror), and takes over once it is killed -9', async () => {
    emu = await startEmulator();
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const tm = await dialect.fresh();
    // One cycle, none while the mirror is removed below: a cycle would notice a SQLite file gone
    // and stop the daemon (sqlite-mirror-file.test.ts), releasing the lock this test needs held.
    const env = daemonEnv(emu, tm, { WSMIRROR_SCHEDULE: '1h' });

    let kill: (() => void) | undefined;
    let started = false;
    const first: Promise<RunResult> = runWsmirror(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' }, {
      killAfterMs: 60_000,
      onSpawn: (k) => {
        kill = k;
      },
      killWhen: (stdout) => {
        started ||= stdout.includes('cycle finished') || stdout.includes('"cycle"');
        return false;
      },
    });
    for (let waited = 0; !started; waited += 50) {
      if (waited > 30_000) throw new Error('the first daemon never finished a cycle');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    for (const command of ['sync', 'run']) {
      const second = await runWsmirror([command], env, { killAfterMs: 30_000 });
      expect(second.code, `${command}: ${second.stderr}`).toBe(78);
      expect(second.stderr).toMatch(/in use by another wsmirror process/);
      expect(second.stderr).toContain(dialect.dialect === 'sqlite' ? tm.url.slice('sqlite:'.length) : tm.pgSchema!);
    }

    // Commands that run no cycle go on beside it.
    const listed = await runWsmirror(['outbox', '--json'], env, { killAfterMs: 30_000 });
    expect(listed.code, listed.stderr).toBe(0);
    const discarded = await runWsmirror(['outbox', 'discard', '--table', 'crm.people'], env, { killAfterMs: 30_000 });
    expect({ code: discarded.code, stdout: discarded.stdout }).toEqual({ code: 0, stdout: 'outbox: 0 entries discarded, 0 records restored from upstream\n' });

    // A refused sync creates nothing, not even a mirror someone removed under the daemon.
    const mirrorExists = async () => dialect.dialect === 'sqlite'
      ? ['', '-wal', '-shm'].filter((suffix) => existsSync(`${tm.url.slice('sqlite:'.length)}${suffix}`))
      : (await tm.sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1', [tm.pgSchema])).map((r) => r.n);
    if (dialect.dialect === 'sqlite') for (const suffix of ['', '-wal', '-shm']) rmSync(`${tm.url.slice('sqlite:'.length)}${suffix}`, { force: true });
    else await tm.sql(`DROP SCHEMA ${tm.pgSchema!} CASCADE`);
    const refused = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toMatch(/in use by another wsmirror process/);
    expect(await mirrorExists()).toEqual(dialect.dialect === 'sqlite' ? [] : [0]);

    kill!();
    expect((await first).signal).toBe('SIGKILL');
    const after = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
    expect(after.code, after.stderr).toBe(0);
  }, 120_000);
});
