import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../helpers/emulator.ts';
import { WSMIRROR_BIN, daemonEnv, runWsmirror, stopProcess } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** `wsmirror demo` as a real process in a temporary directory: what a first-time user runs. */

interface PrintedQuery {
  file: string;
  sql: string;
}

/** The `sqlite3 FILE "SQL"` line of the output, with the shell's double-quote escapes undone. */
function printedQuery(stdout: string): PrintedQuery {
  const m = /^ {2}sqlite3 (\S+) "((?:[^"\\]|\\.)*)"$/m.exec(stdout);
  if (!m) throw new Error(`no sqlite3 example in:\n${stdout}`);
  return { file: m[1]!, sql: m[2]!.replace(/\\(.)/g, '$1') };
}

/** `  TABLE  SQL TABLE  ROWS` lines of the output: SQL table name → printed row count. */
function printedCounts(stdout: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of stdout.matchAll(/^ {2}[a-z0-9_]+\.[a-z0-9_]+ +([a-z0-9_]+) +([0-9]+)$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

function tableCounts(file: string): Map<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const names = db.prepare(`SELECT "sql_name" FROM "_wsmirror_tables"`).all() as { sql_name: string }[];
    return new Map(names.map(({ sql_name }) => [
      sql_name,
      (db.prepare(`SELECT count(*) AS n FROM "${sql_name}"`).get() as { n: number }).n,
    ]));
  } finally {
    db.close();
  }
}

function checksum(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The sample workspace the demo serves. */
const SEED = join(import.meta.dirname, '../../config/emulator-seed.example.json');

describe('wsmirror demo (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs, as `npm start` starts it, through the launcher with the service heap bounds: under 128 MB at its peak', async () => {
    const scripts = (JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['start']).toBe('bin/wsmirror demo');
    const res = await runWsmirror(['demo', '--db', 'bounded.db'], {}, { cwd: dir, launcher: true });
    expect(res.code, res.stderr).toBe(0);
    // With Node's defaults the process (emulator and daemon) peaked at 158 MiB; bounded, 105 MiB.
    expect(res.peakRssBytes).toBeGreaterThan(0);
    expect(res.peakRssBytes!).toBeLessThan(128_000_000);
  });

  it('mirrors the sample workspace into ./wsmirror-demo.db and prints a query that runs and names the options', async () => {
    const res = await runWsmirror(['demo'], {}, { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    // Plain text only: the logs (at warn) stay out of the walkthrough.
    expect(res.stdout.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    expect(res.stdout).toContain('Mirror: ./wsmirror-demo.db');
    // Run from outside the checkout, with no wsmirror on PATH: the commands it prints name the program as invoked.
    expect(res.stdout).toContain(`WSMIRROR_MIRROR_URL=sqlite:./wsmirror-demo.db ${WSMIRROR_BIN} status`);
    expect(res.stdout).toContain(`Run ${WSMIRROR_BIN} demo --keep-running`);

    const file = join(dir, 'wsmirror-demo.db');
    expect(existsSync(file)).toBe(true);
    const counts = tableCounts(file);
    expect([...counts.keys()].sort()).toEqual(['crm__companies', 'crm__contacts', 'ops__meetings', 'ops__settings']);
    expect(printedCounts(res.stdout)).toEqual(counts);
    expect([...counts.values()].every((n) => n > 0)).toBe(true);

    const query = printedQuery(res.stdout);
    expect(query.file).toBe('./wsmirror-demo.db');
    expect(query.sql).toContain('_wsmirror_choice_options');
    const db = new Database(join(dir, query.file), { readonly: true });
    try {
      const rows = db.prepare(query.sql).all() as Record<string, unknown>[];
      expect(rows.length).toBeGreaterThan(0);
      // The choice column comes back as option names, not as the option ids stored in the table.
      const options = db.prepare(`SELECT "option_id", "name" FROM "_wsmirror_choice_options" WHERE "column_name" = 'industry'`)
        .all() as { option_id: string; name: string }[];
      const names = rows.map((r) => r['industry']);
      expect(names.filter((n) => n !== null).length).toBeGreaterThan(0);
      for (const n of names) if (n !== null) expect(options.map((o) => o.name)).toContain(n);
      expect(names.some((n) => options.some((o) => o.option_id === n))).toBe(false);
      // It shows what the readable view shows (and docs/querying.md joins): the option's label.
      expect(query.sql).toContain('o.label AS industry');
      const viewed = db.prepare('SELECT "industry_label" FROM "crm__companies_v" ORDER BY "id"').all() as { industry_label: string | null }[];
      expect(names).toEqual(viewed.map((v) => v.industry_label));
    } finally {
      db.close();
    }
  });

  it('runs again into the same file, and converges to the same rows', async () => {
    const first = tableCounts(join(dir, 'wsmirror-demo.db'));
    const res = await runWsmirror(['demo'], {}, { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    expect(tableCounts(join(dir, 'wsmirror-demo.db'))).toEqual(first);
  });

  it('takes --db, and ignores WSMIRROR_* settings meant for a real mirror', async () => {
    const elsewhere = join(dir, 'not-this.db');
    const res = await runWsmirror(['demo', '--db', 'custom.db'], {
      WSMIRROR_MIRROR_URL: `sqlite:${elsewhere}`,
      WSMIRROR_BASE_URL: 'http://127.0.0.1:1',
    }, { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    expect(printedQuery(res.stdout).file).toBe('./custom.db');
    expect(tableCounts(join(dir, 'custom.db')).size).toBe(4);
    expect(existsSync(elsewhere)).toBe(false);
  });

  it('refuses (exit 78) a --db file that is not a demo mirror, leaving it untouched', async () => {
    const file = join(dir, 'mine.db');
    const db = new Database(file);
    db.exec('CREATE TABLE mine (x INTEGER); INSERT INTO mine VALUES (1)');
    db.close();
    const res = await runWsmirror(['demo', '--db', 'mine.db'], {}, { cwd: dir });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain(file);
    const check = new Database(file, { readonly: true });
    const names = (check.prepare(`SELECT name FROM sqlite_schema`).all() as { name: string }[]).map((r) => r.name);
    check.close();
    expect(names).toEqual(['mine']);
  });

  it('refuses (exit 78) a real mirror of another workspace with the same module names, leaving it byte for byte', async () => {
    const emu = await startEmulator({ workspaceId: 'real00000001' });
    const file = join(dir, 'real.db');
    try {
      const upstream = new UpstreamWorkspace(emu);
      await upstream.createModule('crm');
      await upstream.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
      await upstream.createRecords('crm', 'deals', [{ title: 'big one' }]);
      const made = await runWsmirror(['sync'], daemonEnv(emu, { url: `sqlite:${file}` }));
      expect(made.code, made.stderr).toBe(0);
    } finally {
      await emu.close();
    }
    const before = checksum(file);
    const res = await runWsmirror(['demo', '--db', 'real.db'], {}, { cwd: dir });
    expect(res.code, res.stdout).toBe(78);
    expect(res.stderr).toContain(file);
    expect(res.stderr).toContain('not created by wsmirror demo');
    expect(checksum(file)).toBe(before);
    expect([...tableCounts(file)]).toEqual([['crm__deals', 1]]);
  }, 60_000);

  it('refuses a demo file that mirrors another workspace, and one a real sync has written since', async () => {
    const marked = join(dir, 'marked.db');
    expect((await runWsmirror(['demo', '--db', 'marked.db'], {}, { cwd: dir })).code).toBe(0);
    const db = new Database(marked);
    db.prepare(`UPDATE "_wsmirror_cursors" SET "value" = 'else00000001' WHERE "name" = 'mirror:workspace'`).run();
    db.close();
    const before = checksum(marked);
    const other = await runWsmirror(['demo', '--db', 'marked.db'], {}, { cwd: dir });
    expect(other.code).toBe(78);
    expect(other.stderr).toContain('mirrors workspace else00000001');
    expect(checksum(marked)).toBe(before);

    // A workspace with the demo's id at another address: `wsmirror sync` into a demo file is refused
    // (its cursors are the demo emulator's, which is gone); a resync of every table takes the file
    // over, and the file is no longer the demo's.
    const synced = join(dir, 'synced.db');
    expect((await runWsmirror(['demo', '--db', 'synced.db'], {}, { cwd: dir })).code).toBe(0);
    const emu = await startEmulator({ workspaceId: 'demo00000001', seed: JSON.parse(readFileSync(SEED, 'utf8')) });
    try {
      const demoFile = checksum(synced);
      const sync = await runWsmirror(['sync'], daemonEnv(emu, { url: `sqlite:${synced}` }));
      expect(sync.code, sync.stderr).toBe(78);
      expect(sync.stderr).toContain('was made by wsmirror demo from its own emulator at http://127.0.0.1:');
      expect(checksum(synced)).toBe(demoFile);
      const res = await runWsmirror(['resync'], daemonEnv(emu, { url: `sqlite:${synced}` }));
      expect(res.code, res.stderr).toBe(0);
    } finally {
      await emu.close();
    }
    const afterSync = checksum(synced);
    const refused = await runWsmirror(['demo', '--db', 'synced.db'], {}, { cwd: dir });
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain('not created by wsmirror demo');
    expect(checksum(synced)).toBe(afterSync);
  }, 90_000);

  it('rejects a bad --port as a usage error', async () => {
    const res = await runWsmirror(['demo', '--port', 'abc'], {}, { cwd: dir });
    expect(res.code).toBe(2);
  });

  it('--keep-running serves the emulator, follows a change made through the printed curl example, and stops on SIGTERM', async () => {
    const live = await keepRunning(dir, 'live.db');
    const { child } = live;
    try {
      const { stdout } = live;
      const url = /The emulator stays up at (http:\/\/127\.0\.0\.1:[0-9]+), with the API key (\S+) /.exec(stdout);
      expect(url, stdout).not.toBeNull();

      const list = /^ {2}curl -H '([^']*)' (\S+)$/m.exec(stdout);
      expect(list, stdout).not.toBeNull();
      expect(list![1]).toBe(`Authorization: Bearer ${url![2]}`);
      const listed = await fetch(list![2]!, { headers: { authorization: list![1]!.slice('Authorization: '.length) } });
      expect(listed.status).toBe(200);

      const patch = /^ {2}curl -X PATCH -H '([^']*)' -H '([^']*)' -d '([^']*)' (\S+)$/m.exec(stdout);
      expect(patch, stdout).not.toBeNull();
      const patched = await fetch(patch![4]!, {
        method: 'PATCH',
        headers: { authorization: patch![1]!.slice('Authorization: '.length), 'content-type': 'application/json' },
        body: patch![3]!,
      });
      expect(patched.status, await patched.clone().text()).toBe(200);
      const change = (JSON.parse(patch![3]!) as { records: Record<string, unknown>[] }).records[0]!;
      const [field, value] = Object.entries(change).find(([k]) => k !== 'id')!;

      // The daemon pulls every 5 s: the change reaches the mirror without another command.
      const db = new Database(join(dir, 'live.db'), { readonly: true });
      try {
        const deadline = Date.now() + 20_000;
        let seen: unknown;
        while (Date.now() < deadline) {
          seen = (db.prepare(`SELECT "${field}" AS v FROM "crm__companies" WHERE id = ?`).get(change['id']) as { v: unknown }).v;
          if (seen === value) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(seen).toBe(value);
      } finally {
        db.close();
      }

      expect(await live.stop()).toBe(0);
      expect(live.stderr()).toBe('');
    } finally {
      await stopProcess(child, 'SIGKILL');
    }
  }, 60_000);

  it('--keep-running changes a record upstream itself and prints each change as it lands; the printed SQL edit reaches upstream', async () => {
    const live = await keepRunning(dir, 'both.db');
    const waitFor = async (pattern: RegExp): Promise<RegExpExecArray> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const m = pattern.exec(live.output());
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${live.output()}\n${live.stderr()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      // The demo's own change: made upstream, then reported again once the mirror has it.
      const made = await waitFor(/^\[\d\d:\d\d:\d\d\] upstream: created crm\.companies #(\d+) \(by the demo\)$/m);
      await waitFor(new RegExp(`^\\[[\\d:]+\\] mirror ← upstream: crm\\.companies: 1 upserted$`, 'm'));
      await waitFor(new RegExp(`^\\[[\\d:]+\\] mirror: created crm\\.companies #${made[1]} arrived [\\d.]+ s after it was made$`, 'm'));
      expect(rowsOf(join(dir, 'both.db'), 'crm__companies').map((r) => String(r['id']))).toContain(made[1]);

      // The other direction, as printed: an SQL edit of the mirror, pushed by the next cycle.
      const sqlLine = /^ {2}sqlite3 (\S+) "(UPDATE (?:[^"\\]|\\.)*)"$/m.exec(live.stdout);
      expect(sqlLine, live.stdout).not.toBeNull();
      const update = sqlLine![2]!.replace(/\\(.)/g, '$1');
      const id = /WHERE id = (\d+)$/.exec(update)![1]!;
      const db = new Database(join(dir, sqlLine![1]!));
      try {
        db.exec(update);
      } finally {
        db.close();
      }
      await waitFor(/^\[[\d:]+\] mirror → upstream: 1 local edit pushed$/m);
      const list = /^ {2}curl -H '([^']*)' (\S+)$/m.exec(live.stdout)!;
      const upstream = await fetch(`${list[2]}?limit=100`, { headers: { authorization: list[1]!.slice('Authorization: '.length) } });
      const records = (await upstream.json()) as { data: { id: string; values: Record<string, unknown> }[] };
      expect(records.data.find((r) => String(r.id) === id)?.values['employees']).toBe(750);

      expect(await live.stop()).toBe(0);
      expect(live.output()).toContain('wsmirror demo: stopped by SIGTERM');
      expect(live.output()).toContain('The mirror stays in ./both.db');
      expect(live.stderr()).toBe('');
    } finally {
      await stopProcess(live.child, 'SIGKILL');
    }
  }, 90_000);

  it('a later run holds exactly the sample workspace, whatever happened upstream during an earlier one', async () => {
    const live = await keepRunning(dir, 'again.db');
    try {
      const m = /The emulator stays up at (http:\/\/127\.0\.0\.1:[0-9]+), with the API key (\S+) /.exec(live.stdout);
      expect(m, live.stdout).not.toBeNull();
      const upstream = new UpstreamWorkspace({ url: m![1]!, apiKey: m![2]!, adminToken: '', workspaceId: 'demo00000001', base: '/api/v1/workspace/demo00000001' });
      const [added] = await upstream.createRecords('crm', 'companies', [{ name: 'Stale Ltd' }]);
      const gone = (await upstream.allRecords('crm', 'companies'))[0]!.id;
      await upstream.deleteRecords('crm', 'companies', [gone]);
      // The running demo pulls both changes into the file.
      const ids = () => rowsOf(join(dir, 'again.db'), 'crm__companies').map((r) => String(r['id']));
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !(ids().includes(added!) && !ids().includes(gone))) await new Promise((r) => setTimeout(r, 250));
      expect(ids()).toContain(added);
      expect(ids()).not.toContain(gone);
      expect(await live.stop()).toBe(0);
    } finally {
      await stopProcess(live.child, 'SIGKILL');
    }

    const again = await runWsmirror(['demo', '--db', 'again.db'], {}, { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    const fresh = await runWsmirror(['demo', '--db', 'fresh.db'], {}, { cwd: dir });
    expect(fresh.code, fresh.stderr).toBe(0);
    const tables = [...tableCounts(join(dir, 'fresh.db')).keys()].sort();
    expect([...tableCounts(join(dir, 'again.db')).keys()].sort()).toEqual(tables);
    for (const table of tables) expect(rowsOf(join(dir, 'again.db'), table), table).toEqual(rowsOf(join(dir, 'fresh.db'), table));
  }, 90_000);
});

interface KeptRunning {
  child: ChildProcess;
  /** Everything printed up to "Press Ctrl-C". */
  stdout: string;
  /** Everything printed so far. */
  output(): string;
  stderr(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `wsmirror demo --keep-running` and waits until it has printed its walkthrough. */
async function keepRunning(cwd: string, db: string): Promise<KeptRunning> {
  const child = spawn(process.execPath, [WSMIRROR_BIN, 'demo', '--keep-running', '--db', db], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "Press Ctrl-C" within 20 s; stderr: ${stderr}`)), 20_000);
      child.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (stdout.includes('Press Ctrl-C')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}; stderr: ${stderr}`)));
    });
  } catch (error) {
    await stopProcess(child, 'SIGKILL');
    throw error;
  }
  return {
    child,
    stdout,
    output: () => stdout,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Every row of a table by id, without `_synced_at`; timestamp fields only as set or not (the
 * sample workspace fills some with the emulator's "now", which differs from run to run).
 */
function rowsOf(file: string, table: string): Record<string, unknown>[] {
  const db = new Database(file, { readonly: true });
  try {
    const clock = new Set((db.prepare(
      `SELECT f."column_name" AS c FROM "_wsmirror_fields" f JOIN "_wsmirror_tables" t ON t."table_id" = f."table_id"
       WHERE t."sql_name" = ? AND f."field_type" = 'timestamp'`,
    ).all(table) as { c: string }[]).map((r) => r.c));
    return (db.prepare(`SELECT * FROM "${table}" ORDER BY id`).all() as Record<string, unknown>[])
      .map(({ _synced_at: _, ...row }) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, clock.has(k) ? v !== null : v])));
  } finally {
    db.close();
  }
}
