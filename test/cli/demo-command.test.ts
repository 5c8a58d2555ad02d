import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { WSMIRROR_BIN, runWsmirror, stopProcess } from '../helpers/processes.ts';

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

describe('wsmirror demo (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('mirrors the sample workspace into ./wsmirror-demo.db and prints a query that runs and names the options', async () => {
    const res = await runWsmirror(['demo'], {}, { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    // Plain text only: the logs (at warn) stay out of the walkthrough.
    expect(res.stdout.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    expect(res.stdout).toContain('Mirror: ./wsmirror-demo.db');

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

  it('rejects a bad --port as a usage error', async () => {
    const res = await runWsmirror(['demo', '--port', 'abc'], {}, { cwd: dir });
    expect(res.code).toBe(2);
  });

  it('--keep-running serves the emulator, follows a change made through the printed curl example, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [WSMIRROR_BIN, 'demo', '--keep-running', '--db', 'live.db'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
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

      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
    } finally {
      await stopProcess(child, 'SIGKILL');
    }
  }, 60_000);
});
