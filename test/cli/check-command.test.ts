import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror, type MirrorLocation } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror check` as a real process: a good configuration against a mirror not made yet and
 * against an existing one (whose bytes, or Postgres schema, it leaves exactly as they were), and
 * broken ones (a refused key, an unreachable mirror, a bad setting) with exit code 78.
 */
interface CheckJson {
  ok: boolean;
  upstream: { ok: boolean; error?: string };
  mirror: { exists: boolean; ok: boolean; problems: string[] };
  plan: { operations: string[]; tables: { table: string; mode: string; action: string; rows: number | null; estimatedRows: number | null }[] } | null;
}

forEachDialect('wsmirror check (real processes)', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let t: TestMirror;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-check-'));

  beforeAll(async () => {
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createTable('crm', 'notes', { hasHistory: false }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'deals', Array.from({ length: 250 }, (_, i) => ({ title: `d${i}` })));
    await ws.createRecords('crm', 'notes', [{ body: 'a' }, { body: 'b' }, { body: 'c' }]);
    t = await fresh();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the mirror holds, byte for byte on SQLite, every table's definition and rows on Postgres. */
  async function snapshot(): Promise<string> {
    if (dialect === 'sqlite') return createHash('sha256').update(readFileSync(t.url.replace(/^sqlite:/, ''))).digest('hex');
    const columns = await t.sql(`SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = $1 ORDER BY table_name, ordinal_position`, [t.pgSchema]);
    const tables = await t.sql<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [t.pgSchema]);
    const contents = [];
    for (const { table_name } of tables) contents.push(await t.sql(`SELECT * FROM ${t.table(table_name)} ORDER BY 1`));
    return JSON.stringify({ columns, contents });
  }

  const check = async (mirror: MirrorLocation, extra: Record<string, string> = {}) => {
    const env = daemonEnv(emu, mirror, extra);
    const text = await runWsmirror(['check'], env);
    const json = await runWsmirror(['check', '--json'], env);
    expect(json.code).toBe(text.code);
    return { code: json.code, text: text.stdout, stderr: text.stderr, report: json.code === 78 && json.stdout === '' ? undefined : JSON.parse(json.stdout) as CheckJson };
  };

  it('a mirror not made yet: ok, every table to backfill with its estimated records, and nothing created', async () => {
    const mirror: MirrorLocation = dialect === 'sqlite'
      ? { url: `sqlite:${join(dir, 'new.db')}` }
      : { url: t.url, pgSchema: `wsm_check_${randomBytes(5).toString('hex')}` };
    const { code, text, report } = await check(mirror);
    expect(code, text).toBe(0);
    expect(report!.ok).toBe(true);
    expect(report!.mirror).toMatchObject({ exists: false, ok: true });
    expect(report!.plan!.tables).toEqual([
      { table: 'crm.deals', mode: 'history', action: 'backfill', rows: null, estimatedRows: 250 },
      { table: 'crm.notes', mode: 'fullscan', action: 'backfill', rows: null, estimatedRows: 3 },
    ]);
    expect(report!.plan!.operations).toEqual([expect.stringContaining('create table crm__deals'), expect.stringContaining('create table crm__notes')]);
    expect(text).toContain('ok   upstream: ');
    expect(text).toContain('no wsmirror catalog there yet: the first sync creates it');
    expect(text).toMatch(/crm\.deals +history +backfill +- +~250/);
    if (dialect === 'sqlite') expect(existsSync(join(dir, 'new.db'))).toBe(false);
    else expect(await t.sql('SELECT 1 FROM pg_namespace WHERE nspname = $1', [mirror.pgSchema])).toEqual([]);
  }, 60_000);

  it('an existing mirror: ok, what the next sync would do, and not one byte changed', async () => {
    const sync = await runWsmirror(['sync'], daemonEnv(emu, t));
    expect(sync.code, sync.stderr).toBe(0);
    await ws.createTable('crm', 'tasks', { hasHistory: true }, [{ name: 'todo', type: 'string', labels: { '': 'To do' } }]);
    await ws.createRecords('crm', 'tasks', [{ todo: 'x' }]);
    const before = await snapshot();
    const { code, text, report } = await check(t);
    expect(code, text).toBe(0);
    expect(report!.mirror).toMatchObject({ exists: true, ok: true, problems: [] });
    expect(report!.plan!.tables).toEqual([
      { table: 'crm.deals', mode: 'history', action: 'poll changes', rows: 250, estimatedRows: null },
      { table: 'crm.notes', mode: 'fullscan', action: 'full scan', rows: 3, estimatedRows: 3 },
      { table: 'crm.tasks', mode: 'history', action: 'backfill', rows: null, estimatedRows: 1 },
    ]);
    expect(await snapshot()).toBe(before);
  }, 60_000);

  it('broken configurations exit 78 and say what is wrong', async () => {
    const badKey = await check(t, { WSMIRROR_API_KEY: 'not-the-key-0123456789' });
    expect(badKey.code).toBe(78);
    expect(badKey.report!.upstream.ok).toBe(false);
    expect(badKey.text).toMatch(/FAIL upstream: .*401/);
    // Where the key came from, as sync says it; no header with a redacted value in it.
    expect(badKey.text).toContain('upstream refused the API key (HTTP 401) from WSMIRROR_API_KEY');
    expect(badKey.text).not.toContain('Bearer');
    expect(badKey.report!.mirror.ok).toBe(true);

    const unreachable: MirrorLocation = dialect === 'sqlite'
      ? { url: `sqlite:${join(dir, 'no-such-dir', 'm.db')}` }
      : { url: 'postgres://nobody@127.0.0.1:1/none', pgSchema: 'public' };
    const badMirror = await check(unreachable);
    expect(badMirror.code).toBe(78);
    expect(badMirror.report!.mirror.ok).toBe(false);
    expect(badMirror.text).toContain('FAIL mirror: ');

    if (dialect === 'postgres') {
      // A password in the mirror URL is never printed, whether the mirror is there or not.
      const withPassword = (schema: string): MirrorLocation => {
        const url = new URL(t.url);
        url.password = 's3cret-pw';
        return { url: url.toString(), pgSchema: schema };
      };
      for (const location of [withPassword('wsm_no_such_schema'), { url: 'postgres://nobody:s3cret-pw@127.0.0.1:1/none', pgSchema: 'public' }]) {
        const report = await check(location);
        expect(`${report.text}${report.stderr}${JSON.stringify(report.report)}`).not.toContain('s3cret-pw');
        expect(report.text).toMatch(/mirror: postgres:\/\/[^ ]*:\[Redacted\]@/);
      }
      // Nor in any other place a URL may hold one: a query parameter, or a password holding an @.
      for (const url of [
        'postgres://nobody@127.0.0.1:1/none?password=s3cret-pw', 'postgres://nobody@127.0.0.1:1/none?sslmode=disable&sslpassword=s3cret-pw',
        'postgres://nobody:pa@s3cret-pw@127.0.0.1:1/none',
      ]) {
        const report = await check({ url, pgSchema: 'public' });
        expect(`${report.text}${report.stderr}${JSON.stringify(report.report)}`, url).not.toContain('s3cret-pw');
      }
    }

    const badSetting = await check(t, { WSMIRROR_SCHEDULE: 'every now and then' });
    expect(badSetting.code).toBe(78);
    expect(badSetting.stderr).toContain('WSMIRROR_SCHEDULE');
  }, 60_000);
});
