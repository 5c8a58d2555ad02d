import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unprivilegedUser } from '../helpers/embedded-postgres.ts';
import { countLogLines, runWsmirror } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';

/**
 * Symbolic links around a SQLite mirror (docs/operations.md, "Files of a SQLite mirror"). A
 * mirror path may be a link: SQLite opens the file it points to, and wsmirror locks and checks
 * that file too. The lock file is never followed: a link there (planted in a shared directory, or
 * left by mistake) would make wsmirror create, write and lock the file it points to.
 */
describe('SQLite: symbolic links at the mirror path and the lock file (real processes)', () => {
  const suite = sqliteDaemonSuite('wsmirror-symlinks', ['Ada']);
  const { dir } = suite;
  let n = 0;

  /** A new folder of the suite's directory. */
  const folder = () => {
    const path = join(dir, `case${++n}`);
    mkdirSync(path);
    return path;
  };

  it('refuses a lock file that is a symbolic link (exit 78, naming it), and neither creates nor writes what it points to', async () => {
    const here = folder();
    const mirror = join(here, 'mirror.db');
    const lock = `${mirror}-wsmirror-sync.lock`;
    // To an empty file of someone's: SQLite would make it a database (and hold it locked).
    const victim = join(here, 'victim');
    writeFileSync(victim, '');
    symlinkSync(victim, lock);
    const refused = await runWsmirror(['sync'], suite.env(mirror), { killAfterMs: 30_000, cwd: here });
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toContain(lock);
    expect(refused.stderr).toMatch(/is a symbolic link/);
    expect(readFileSync(victim)).toHaveLength(0);
    expect(existsSync(mirror)).toBe(false);

    // To no file yet: SQLite would create it.
    rmSync(lock);
    const planted = join(here, 'planted');
    symlinkSync(planted, lock);
    expect((await runWsmirror(['sync'], suite.env(mirror), { killAfterMs: 30_000, cwd: here })).code).toBe(78);
    expect(existsSync(planted)).toBe(false);

    // The link removed, the lock file is made anew and the sync goes on.
    rmSync(lock);
    const synced = await runWsmirror(['sync'], suite.env(mirror), { killAfterMs: 30_000, cwd: here });
    expect(synced.code, synced.stderr).toBe(0);
    expect(lstatSync(lock).isFile()).toBe(true);
  }, 90_000);

  it('a lock file replaced by a symbolic link under a daemon: each cycle fails naming it, nothing is written where it points, and once it is removed the daemon locks a file of its own again', async () => {
    const here = folder();
    const mirror = join(here, 'mirror.db');
    const lock = `${mirror}-wsmirror-sync.lock`;
    const { daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1s' }, mirror);
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    const victim = join(here, 'victim');
    writeFileSync(victim, '');
    rmSync(lock);
    symlinkSync(victim, lock);
    const refusals = (stdout: string, stderr: string) => `${stdout}${stderr}`.split(`${lock} is a symbolic link`).length - 1;
    await daemon.waitFor('two cycles refused', (stdout, stderr) => refusals(stdout, stderr) >= 2);
    expect(readFileSync(victim)).toHaveLength(0);
    // The link removed, the daemon locks a lock file of its own again and goes on.
    rmSync(lock);
    await daemon.waitFor('the lock taken again', (stdout) => countLogLines(stdout, /took the sync lock of the mirror .* again/) === 1);
    const cycles = countLogLines(daemon.output().stdout, /^cycle done/);
    await daemon.waitFor('another cycle', (stdout) => countLogLines(stdout, /^cycle done/) > cycles);
    expect(lstatSync(lock).isFile()).toBe(true);
  }, 90_000);

  it('a mirror path that is a symbolic link: the mirror and its lock file are those of the file it points to, so a process naming that file is refused while one syncs through the link', async () => {
    const here = folder();
    mkdirSync(join(here, 'data'));
    const real = join(here, 'data', 'mirror.db');
    const link = join(here, 'mirror.db');
    // The link comes first, the file it points to does not exist yet: the first sync creates it.
    symlinkSync(real, link);
    const { daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1h' }, link);
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(['', '-wal', '-wsmirror-sync.lock'].map((suffix) => existsSync(`${real}${suffix}`))).toEqual([true, true, true]);
    expect(existsSync(`${link}-wsmirror-sync.lock`)).toBe(false);

    const second = await runWsmirror(['sync'], suite.env(real), { killAfterMs: 30_000, cwd: here });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/in use by another wsmirror process/);
    // Through the link, as always.
    const third = await runWsmirror(['sync'], suite.env(link), { killAfterMs: 30_000, cwd: here });
    expect(third.code, third.stderr).toBe(1);
  }, 90_000);

  it('a mirror path that is a symbolic link into a directory this user cannot write: check and sync name that directory', async () => {
    // Under root (whom permissions do not stop) the commands run as `nobody`, owner of the link's
    // folder and of the mirror file, but not of the folder the file is in.
    const user = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
    chmodSync(dir, 0o755);
    const here = folder();
    const data = join(here, 'data');
    mkdirSync(data);
    const real = join(data, 'mirror.db');
    const link = join(here, 'mirror.db');
    symlinkSync(real, link);
    const made = await runWsmirror(['sync'], suite.env(link), { killAfterMs: 30_000, cwd: here });
    expect(made.code, made.stderr).toBe(0);
    if (user) for (const path of [here, link, ...readdirSync(data).map((name) => join(data, name))]) chownSync(path, user.uid, user.gid);
    chmodSync(data, 0o555);
    try {
      const cannotCreate = `cannot create files in ${data} (the -wal and -shm files live beside the mirror)`;
      const run = (args: string[]) => runWsmirror(args, { ...suite.env(link), HOME: here }, { killAfterMs: 30_000, cwd: here, ...(user ? { user } : {}) });
      const check = await run(['check']);
      expect(check.code, check.stderr).toBe(78);
      expect(check.stdout).toContain(cannotCreate);
      const sync = await run(['sync']);
      expect(sync.code, sync.stderr).toBe(78);
      expect(sync.stderr).toContain(cannotCreate);
    } finally {
      chmodSync(data, 0o755);
    }
  }, 90_000);
});
