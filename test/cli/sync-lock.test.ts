import { existsSync, rmSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { freePort } from '../helpers/free-port.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { countLogLines, daemonEnv, runWsmirror, stopProcess } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * One process syncs a mirror at a time: two would read the same local inserts and create each
 * record upstream twice. `run` and `sync` hold the mirror's sync lock for as long as they run;
 * the lock goes with the process, however it ends.
 */
const startWsmirror = startWsmirrorKilledAfterEach();

forEachDialect('one syncing process per mirror (real processes)', (dialect) => {
  let emu: RunningEmulator | undefined;
  afterEach(async () => emu?.close());

  it('a second sync exits 1 naming the holder, a second run waits (not ready) and syncs once the first is gone', async () => {
    emu = await startEmulator();
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    await upstream.createRecords('crm', 'people', [{ name: 'Ada' }]);
    const tm = await dialect.fresh();
    // One cycle, none while the mirror is removed below: a cycle would notice a SQLite file gone
    // and stop the daemon (sqlite-mirror-file.test.ts), releasing the lock this test needs held.
    const env = daemonEnv(emu, tm, { WSMIRROR_SCHEDULE: '1h' });
    const first = startWsmirror(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info' }, { killAfterMs: 90_000 });
    await first.waitFor('a first cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);

    // Another process holds the mirror for now: no configuration error (systemd would not
    // restart a daemon that exits 78), and the message names the mirror and who holds it.
    const holder = dialect.dialect === 'sqlite'
      ? new RegExp(`process ${first.child.pid} \\([^)]*wsmirror run\\)`)
      : /the session of pid \d+ \(application "wsmirror sync lock", user "[^"]+"/;
    const second = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/in use by another wsmirror process/);
    expect(second.stderr).toMatch(holder);
    expect(second.stderr).not.toContain('configuration error');
    expect(second.stderr).toContain(dialect.dialect === 'sqlite' ? tm.url.slice('sqlite:'.length) : tm.pgSchema!);

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
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/in use by another wsmirror process/);
    expect(await mirrorExists()).toEqual(dialect.dialect === 'sqlite' ? [] : [0]);

    // A second run does not exit: each cycle fails, /readyz says why, until the lock is free.
    const httpPort = await freePort();
    const waiting = startWsmirror(['run'], { ...env, WSMIRROR_SCHEDULE: '1s', WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_HTTP_PORT: String(httpPort) }, { killAfterMs: 90_000 });
    const refusals = (stdout: string) => countLogLines(stdout, /^sync cycle failed: the mirror .* is in use by another wsmirror process/);
    await waiting.waitFor('two refused cycles', (stdout) => refusals(stdout) >= 2);
    const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { reason: string }).reason).toMatch(holder);
    expect(await mirrorExists()).toEqual(dialect.dialect === 'sqlite' ? [] : [0]);

    await stopProcess(first.child, 'SIGKILL');
    await waiting.waitFor('a cycle once the lock is free', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    expect(await tm.sql<{ name: string }>(`SELECT name FROM ${tm.table('crm__people')}`)).toEqual([{ name: 'Ada' }]);
    await stopProcess(waiting.child);
    const ended = await waiting.exited;
    expect(ended.code, ended.stderr).toBe(0);
  }, 120_000);
});
