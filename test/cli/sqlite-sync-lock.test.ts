import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { countLogLines, runWsmirror, stopProcess } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';

/**
 * On SQLite the sync lock is an exclusive lock on `<mirror>-wsmirror-sync.lock`. Deleted under a
 * daemon, the file would let a second process lock a new file of the same name and sync beside
 * it: the daemon notices before its next cycle and locks a new file itself, or stops.
 */
describe('SQLite: the sync lock file deleted under a daemon (real processes)', () => {
  const suite = sqliteDaemonSuite('wsmirror-lock-file');
  const { dir } = suite;

  const startDaemon = async (schedule: string) => {
    const { file, env, daemon } = suite.startRun({ WSMIRROR_SCHEDULE: schedule });
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    return { file, lockFile: `${file}-wsmirror-sync.lock`, env, daemon };
  };
  const cyclesDone = (stdout: string) => countLogLines(stdout, /^cycle done/);

  it('locks a new lock file before its next cycle, logging it; a sync started then is refused', async () => {
    const { lockFile, env, daemon } = await startDaemon('1s');
    rmSync(lockFile);
    await daemon.waitFor('the lock taken again', (stdout) => countLogLines(stdout, /took the sync lock of the mirror .* again/) === 1);
    expect(countLogLines(daemon.output().stdout, /sync lock file .* was deleted or replaced/)).toBe(1);

    const second = await runWsmirror(['sync'], env, { killAfterMs: 30_000, cwd: dir });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/in use by another wsmirror process/);
    const cycles = cyclesDone(daemon.output().stdout);
    await daemon.waitFor('another cycle', (stdout) => cyclesDone(stdout) > cycles);
    await stopProcess(daemon.child);
    expect((await daemon.exited).code).toBe(0);
  }, 90_000);

  it('lets the mirror go and waits, running no cycle, while another process locked a new lock file first; then takes it back', async () => {
    const { file, lockFile, daemon } = await startDaemon('2s');
    // What a second process does when it finds no lock file: creates one and locks it.
    rmSync(lockFile);
    const other = new Database(lockFile);
    try {
      other.pragma('locking_mode = EXCLUSIVE');
      other.exec('BEGIN EXCLUSIVE; COMMIT');
      const synced = (stdout: string) => countLogLines(stdout, /^sync cycle failed: the mirror .* is now synced by another wsmirror process/);
      const refused = (stdout: string) => countLogLines(stdout, new RegExp(`^sync cycle failed: the mirror sqlite:${file} is in use by another wsmirror process .*process ${process.pid} `));
      await daemon.waitFor('the loss and two refused cycles', (stdout) => synced(stdout) === 1 && refused(stdout) >= 2, 60_000);
      // No cycle since (one under way when the lock file went may have ended before it was found).
      const since = daemon.output().stdout.split(/\n(?=.*is now synced by another wsmirror process)/)[1]!;
      expect(cyclesDone(since)).toBe(0);
    } finally {
      other.close();
    }
    const cyclesBefore = cyclesDone(daemon.output().stdout);
    await daemon.waitFor('a cycle once the lock is free', (stdout) => cyclesDone(stdout) > cyclesBefore);
    await stopProcess(daemon.child);
    expect((await daemon.exited).code).toBe(0);
  }, 90_000);
});
