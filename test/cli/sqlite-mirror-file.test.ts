import { copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countLogLines, runWsmirror } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';

/**
 * A SQLite mirror is a file the daemon keeps open: deleted or replaced under it, the daemon
 * would go on writing into a file nobody can open any more. Each cycle checks that the path still
 * names the file it has open; when it does not, `run` stops with exit 1 (the systemd unit then
 * starts it again, and it creates or opens the mirror at that path).
 */
describe('SQLite: the mirror file deleted or replaced under a daemon (real processes)', () => {
  const suite = sqliteDaemonSuite('wsmirror-file-gone', ['Ada', 'Grace']);
  const { dir } = suite;

  /** A daemon on a new mirror file, cycling every second, with its operations port; after its first cycle. */
  const startDaemon = async () => {
    // Below the ephemeral range (32768+) where port-0 listeners of other suites land.
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const { file, env, daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1s', WSMIRROR_HTTP_PORT: String(port) });
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    const readyz = async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status;
    for (let i = 0; i < 100 && (await readyz()) !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await readyz()).toBe(200);
    return { file, env, daemon };
  };

  it('deleted: the next cycle fails naming the file, run exits 1, and a new run creates the mirror again', async () => {
    const { file, env, daemon } = await startDaemon();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });

    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    const problem = `the mirror file ${file} was deleted or replaced while wsmirror had it open`;
    expect(result.stderr).toContain(problem);
    expect(countLogLines(result.stdout, new RegExp(`^sync cycle failed: ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))).toBe(1);
    // Nothing was written into the deleted file's place.
    expect(existsSync(file)).toBe(false);

    const again = await runWsmirror(['sync'], env, { killAfterMs: 30_000, cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(file)).toBe(true);
  }, 90_000);

  it('replaced by another file (a restored copy moved into place): run exits 1 naming the file', async () => {
    const { file, daemon } = await startDaemon();
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);

    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    expect(result.stderr).toContain(`the mirror file ${file} was deleted or replaced while wsmirror had it open`);
  }, 90_000);
});
