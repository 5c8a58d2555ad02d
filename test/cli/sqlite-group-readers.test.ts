import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unprivilegedUser } from '../helpers/embedded-postgres.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * The set-up of systemd/wsmirror.service for readers on the host: the mirror's directory is the
 * daemon's, readable by its group (0750), and a reader of that group opens the file read-only
 * (`sqlite3 -readonly`), with no right to create the -wal and -shm beside it. A WAL file can be
 * read so only while they exist: wsmirror keeps them (the -wal empty) when it closes the mirror,
 * so the reader reads it after `sync` ended and after `run` stopped, not only while `run` is up.
 */
const SQLITE3 = '/usr/bin/sqlite3';
const asRoot = process.getuid?.() === 0;

describe.skipIf(!asRoot || !existsSync(SQLITE3))('SQLite: a reader of the daemon\'s group, read-only, while wsmirror is stopped (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-group-readers-'));
  const mirrorDir = join(dir, 'state');
  const file = join(mirrorDir, 'm.db');
  let env: Record<string, string>;
  let ws: UpstreamWorkspace;

  /** `SELECT count(*)` of the notes, as `nobody` (not the owner; of the directory's group), opening the file read-only. */
  const readerCount = () => {
    const reader = unprivilegedUser();
    const res = spawnSync(SQLITE3, ['-readonly', file, 'SELECT count(*) FROM crm__notes'], { uid: reader.uid, gid: reader.gid, encoding: 'utf8' });
    return `${res.stdout.trim()}${res.stderr.trim()}`;
  };

  beforeAll(async () => {
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'notes', [{ body: 'first' }, { body: 'second' }]);
    chmodSync(dir, 0o755);
    // StateDirectoryMode=0750: the daemon's user owns it, readers are of its group and cannot write it.
    mkdirSync(mirrorDir);
    chownSync(mirrorDir, 0, unprivilegedUser().gid);
    chmodSync(mirrorDir, 0o750);
    env = daemonEnv(emu, { url: `sqlite:${file}` });
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the mirror after a sync ended, and after run stopped on SIGTERM; the -wal is kept empty', async () => {
    const sync = await runWsmirror(['sync'], env, { cwd: dir });
    expect(sync.code, sync.stderr).toBe(0);
    expect(statSync(`${file}-wal`, { throwIfNoEntry: false })?.size).toBe(0);
    expect(existsSync(`${file}-shm`)).toBe(true);
    expect(readerCount()).toBe('2');

    await ws.createRecords('crm', 'notes', [{ body: 'third' }]);
    let child: ChildProcess | undefined;
    const running = runWsmirror(['run'], { ...env, WSMIRROR_SCHEDULE: '1h' }, { cwd: dir, onSpawn: (_kill, c) => (child = c) });
    const begun = Date.now();
    let rows = '';
    // While it runs, and once its first cycle has pulled the third note.
    while (Date.now() - begun < 60_000 && rows !== '3') {
      await new Promise((r) => setTimeout(r, 300));
      rows = readerCount();
    }
    expect(rows).toBe('3');
    child!.kill('SIGTERM');
    expect((await running).code).toBe(0);
    expect(readerCount()).toBe('3');
    expect(statSync(`${file}-wal`, { throwIfNoEntry: false })?.size).toBe(0);

    // A command that only reads (status), run by the daemon's user, leaves them too.
    expect((await runWsmirror(['status'], mirrorEnv({ url: `sqlite:${file}` }), { cwd: dir })).code).toBe(0);
    expect(readerCount()).toBe('3');
  }, 120_000);
});
