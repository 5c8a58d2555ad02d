import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { countLogLines, runWsmirror } from '../helpers/processes.ts';
import { sqliteDaemonSuite } from '../helpers/sqlite-daemon-suite.ts';

/** `text` as a regular expression matching it. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The row edited to `edit` in the mirror file at `path`, and its edit waiting in the outbox; the
 * -wal file left at `oldPath`, if any, empty.
 */
function expectEditIn(path: string, edit: { id: number; name: string }, oldPath: string): void {
  expect(statSync(`${oldPath}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
  const db = new Database(path, { readonly: true });
  try {
    expect(db.prepare('SELECT name FROM crm__people WHERE id = ?').get(edit.id)).toEqual({ name: edit.name });
    expect(db.prepare('SELECT count(*) AS n FROM _wsmirror_outbox').get()).toEqual({ n: 1 });
  } finally {
    db.close();
  }
}

/**
 * A SQLite mirror is a file the daemon keeps open: moved, deleted or replaced under it, the daemon
 * would go on writing into a file nobody finds at the mirror's path. Each cycle checks that the
 * path still names the file it has open; when it does not, `run` stops with exit 1 (the systemd
 * unit then starts it again, and it creates or opens the mirror at that path), having written
 * what its -wal held into the file it has open, wherever that is now.
 */
describe('SQLite: the mirror file moved, deleted or replaced under a daemon (real processes)', () => {
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

  /**
   * An idle daemon (hourly schedule, after its first cycle) whose file is moved into `folder`,
   * with an edit a client that opened it before the move commits after it (into the -wal left
   * at the old path): the id of the row edited.
   */
  const movedUnderIdleDaemon = async (folder: string) => {
    const { file, daemon } = suite.startRun({ WSMIRROR_SCHEDULE: '1h' });
    await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    const client = new Database(file);
    const update = client.prepare("UPDATE crm__people SET name = 'Ada Lovelace' WHERE name = 'Ada' RETURNING id");
    const moved = join(dir, folder, basename(file));
    mkdirSync(join(dir, folder));
    renameSync(file, moved);
    const { id } = update.get() as { id: number };
    client.close();
    return { file, daemon, moved, id };
  };

  it('deleted: the next cycle fails naming the file, run exits 1, and a new run creates the mirror again', async () => {
    const { file, env, daemon } = await startDaemon();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });

    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    const problem = `the mirror file ${file} was deleted or replaced while wsmirror had it open`;
    expect(result.stderr).toContain(problem);
    expect(countLogLines(result.stdout, new RegExp(`^sync cycle failed: ${escaped(problem)}`))).toBe(1);
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

  it('moved to another folder: the daemon writes what its -wal holds into the moved file and says where it is; that file, synced, pushes a local edit exactly once', async () => {
    const { file, daemon } = await startDaemon();
    // A client of the mirror, reading it before the move: its edit is committed into the -wal, which
    // stays at the old path. Made after the move, so that no cycle pushes it before the daemon
    // finds the file gone.
    const client = new Database(file);
    const update = client.prepare("UPDATE crm__people SET name = 'Grace Hopper' WHERE name = 'Grace' RETURNING id");
    const moved = join(dir, 'moved', basename(file));
    mkdirSync(join(dir, 'moved'), { recursive: true });
    renameSync(file, moved);
    const { id } = update.get() as { id: number };
    client.close();

    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    expect(result.stderr).toContain(`the mirror file ${file} was moved to ${moved} while wsmirror had it open`);
    // What was committed is in the moved file; the -wal left at the old path holds nothing.
    expectEditIn(moved, { id, name: 'Grace Hopper' }, file);

    const sync = () => runWsmirror(['sync'], suite.env(moved, { WSMIRROR_LOG_LEVEL: 'info' }), { killAfterMs: 30_000, cwd: dir });
    const first = await sync();
    expect(first.code, first.stderr).toBe(0);
    expect(countLogLines(first.stdout, /^cycle done .*, 1 edit out$/)).toBe(1);
    const upstream = await suite.upstream().allRecords('crm', 'people');
    expect(upstream.find((r) => Number(r.id) === id)?.values.name).toBe('Grace Hopper');
    const second = await sync();
    expect(second.code, second.stderr).toBe(0);
    expect(countLogLines(second.stdout, /^cycle done .*, 0 edits out$/)).toBe(1);
  }, 90_000);

  it('moved, and written at its new place by another client before the daemon stopped: the daemon does not claim the edits made before the move are safe there', async () => {
    const { file, daemon, moved } = await movedUnderIdleDaemon('moved-then-written');
    // Another client opens the file at its new place, without the -wal left at the old path,
    // and writes: its own -wal there holds pages made from the file as it was before.
    const other = new Database(moved);
    other.exec('CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)');
    other.close();
    expect(existsSync(`${moved}-wal`)).toBe(true);

    daemon.child.kill('SIGTERM');
    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const line = result.stdout.split('\n').filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => String((JSON.parse(l) as { msg?: unknown }).msg ?? '')).find((m) => m.startsWith(`the mirror file ${file} was moved to ${moved}`));
    expect(line, result.stdout).toBeDefined();
    expect(line).not.toMatch(/Everything committed to it is in/);
    expect(line).toContain(`${moved}-wal`);
    expect(line).toMatch(/may be lost/);
  }, 90_000);

  it('moved, then the daemon stopped (SIGTERM) before its next cycle: what was committed is in the moved file too, and the log says where', async () => {
    const { file, daemon, moved, id } = await movedUnderIdleDaemon('moved-then-stopped');

    daemon.child.kill('SIGTERM');
    const result = await daemon.exited;
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(countLogLines(result.stdout, new RegExp(`^the mirror file ${escaped(file)} was moved to `))).toBe(1);
    expectEditIn(moved, { id, name: 'Ada Lovelace' }, file);
  }, 90_000);

  it('its -wal file deleted: the next cycle writes what that -wal held into the mirror file, and run exits 1 naming the -wal; other connections read the mirror again', async () => {
    const { file, daemon } = await startDaemon();
    const client = new Database(file);
    const update = client.prepare("UPDATE crm__people SET name = 'Ada B.' WHERE name = 'Ada' RETURNING id");
    // Just after a cycle: the edit is committed into the -wal, which goes before the next cycle.
    const cycles = countLogLines(daemon.output().stdout, /^cycle done/);
    await daemon.waitFor('another cycle', (stdout) => countLogLines(stdout, /^cycle done/) > cycles);
    const { id } = update.get() as { id: number };
    rmSync(`${file}-wal`);
    client.close();

    // Without the check the daemon went on, each cycle a success, while other connections
    // failed with "disk I/O error", and a kill -9 lost what only that -wal held.
    const result = await Promise.race([daemon.exited, new Promise<undefined>((r) => setTimeout(r, 10_000, undefined))]);
    expect(result?.code, `${daemon.output().stdout}\n${daemon.output().stderr}`).toBe(1);
    expect(result!.stderr).toContain(`the -wal file ${file}-wal of the mirror ${file} was deleted or replaced while wsmirror had it open`);
    const reader = new Database(file, { readonly: true });
    try {
      const row = reader.prepare('SELECT name FROM crm__people WHERE id = ?').get(id) as { name: string };
      expect(row.name).toBe('Ada B.');
    } finally {
      reader.close();
    }
  }, 90_000);
});
