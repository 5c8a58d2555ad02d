import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror, type RunResult } from '../helpers/processes.ts';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror status` tells each table's state — ready, blocked by a safety valve,
 * failing, backfilling with its progress — the last error and the cycles, all from what real
 * `wsmirror sync` processes stored in the mirror; its exit code says whether anything needs
 * attention.
 */
interface TableJson {
  table: string; module: string; name: string; sqlName: string | null; mode: string; state: string; status: string; rows: number | null; lagMs: number | null;
  lastPullAt: string | null; currentAsOf: string | null;
  progress: { rowsRead: number; estimatedRows: number | null; percent: number | null } | null;
  lastError: { code: string; message: string; at: string } | null;
}
interface StatusJson {
  tables: TableJson[];
  cycle: { lastSuccessAt: string | null; lastFailureAt: string | null; lastFailure: string | null; nextRunAt: string | null };
  attention: string[];
}

const FIELDS = [{ name: 'name', type: 'string' as const, labels: { '': 'Name' } }];
const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `row ${i}` }));

forEachDialect('wsmirror status: table states (real processes)', ({ fresh }) => {
  let emu: RunningEmulator;
  let proxy: RewritingProxy;
  let ws: UpstreamWorkspace;
  let t: TestMirror;
  let env: Record<string, string>;

  beforeAll(async () => {
    emu = await startEmulator();
    proxy = await startRewritingProxy(emu.url);
    ws = new UpstreamWorkspace(emu);
    t = await fresh();
    env = daemonEnv({ ...emu, url: proxy.url }, t);
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
  });

  async function status(): Promise<{ res: RunResult; json: StatusJson; text: string }> {
    const text = await runWsmirror(['status'], mirrorEnv(t));
    const res = await runWsmirror(['status', '--json'], mirrorEnv(t));
    expect(text.code).toBe(res.code);
    return { res, json: JSON.parse(res.stdout) as StatusJson, text: text.stdout };
  }
  const table = (json: StatusJson, name: string) => json.tables.find((x) => x.table === name)!;

  it('ready: exit 0, every table ready with its lag and last pull, the cycle recorded', async () => {
    await ws.createModule('s');
    await ws.createTable('s', 'fine', { hasHistory: true }, FIELDS);
    await ws.createTable('s', 'valve', { hasHistory: false }, FIELDS);
    await ws.createTable('s', 'broken', { hasHistory: true }, FIELDS);
    await ws.createRecords('s', 'fine', rows(3));
    const valveIds = await ws.createRecords('s', 'valve', rows(300));
    await ws.createRecords('s', 'broken', rows(5));
    const before = Date.now();
    const sync = await runWsmirror(['sync'], env);
    expect(sync.code, sync.stderr).toBe(0);

    const { res, json, text } = await status();
    expect(res.code, res.stdout).toBe(0);
    expect(json.attention).toEqual([]);
    expect(json.tables.map((x) => [x.table, x.status, x.rows])).toEqual([['s.broken', 'ready', 5], ['s.fine', 'ready', 3], ['s.valve', 'ready', 300]]);
    for (const x of json.tables) {
      expect(Date.parse(x.currentAsOf!)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(x.lastPullAt!)).toBeGreaterThanOrEqual(Date.parse(x.currentAsOf!));
      expect(x.lastError).toBeNull();
      expect(x.progress).toBeNull();
    }
    expect(Date.parse(json.cycle.lastSuccessAt!)).toBeGreaterThanOrEqual(before);
    expect(json.cycle.lastFailureAt).toBeNull();
    expect(text).toMatch(/cycles: last success \S+ \(\d+m?s ago\); last failure never/);
    expect(text).not.toContain('needs attention');

    // blocked and failing: the valve table loses 250 of 300 records upstream, the broken table's
    // record answers are corrupt.
    await ws.deleteRecords('s', 'valve', valveIds.slice(0, 250));
    proxy.rewrite = (path) => (path.includes('/tables/broken/records') ? 'this is not JSON' : undefined);
    const failed = await runWsmirror(['sync'], env);
    expect(failed.code).toBe(1);

    const after = await status();
    expect(after.res.code).toBe(1);
    const valve = table(after.json, 's.valve');
    expect(valve.status).toBe('blocked');
    expect(valve.rows).toBe(300);
    expect(valve.lastError).toMatchObject({ code: 'SAFETY_VALVE', message: expect.stringContaining('sync.maxDeleteShare') });
    const broken = table(after.json, 's.broken');
    expect(broken.status).toBe('failing');
    expect(broken.lastError).toMatchObject({ code: 'INVALID_RESPONSE' });
    expect(Date.parse(broken.lastError!.at)).toBeGreaterThan(Date.parse(broken.lastPullAt!));
    expect(table(after.json, 's.fine').status).toBe('ready');
    expect(after.json.cycle.lastFailure).toContain('s.valve');
    expect(after.json.cycle.lastFailure).toContain('s.broken');
    expect(after.json.attention).toEqual([
      expect.stringContaining('s.broken is failing since'),
      expect.stringContaining('s.valve is blocked by a safety valve'),
      expect.stringContaining('the last cycle failed'),
    ]);
    const cells = (name: string) => after.text.split('\n').find((l) => l.startsWith(`${name} `))!.split(/ {2,}/);
    expect(cells('s.valve')[3]).toBe('blocked');
    expect(cells('s.broken')[3]).toBe('failing');
    expect(after.text).toMatch(/s\.broken: failing since \S+ \(INVALID_RESPONSE\): /);
    expect(after.text).toContain('needs attention:\n  - s.broken is failing');

    // Recovery: the answers are good again; the valve table is re-read once its deletes are expected.
    proxy.rewrite = undefined;
    const again = await runWsmirror(['sync'], { ...env, WSMIRROR_SYNC_MAX_DELETE_SHARE: '0.9' });
    expect(again.code, again.stderr).toBe(0);
    const healed = await status();
    expect(healed.res.code, healed.res.stdout).toBe(0);
    expect(healed.json.tables.map((x) => x.status)).toEqual(['ready', 'ready', 'ready']);
    expect(table(healed.json, 's.valve').rows).toBe(50);

    // An upstream's message is shown, never obeyed by the terminal: its control characters
    // (colours, a window title, a carriage return over the line) are escaped.
    const hostile = 'bad \u001b[31mRED\u001b[0m \u001b]0;TITLE\u0007 x\nFAKE: all tables ready\r\u009b2K';
    const p = t.dialect === 'postgres' ? ['$1', '$2'] : ['?', '?'];
    await t.sql(`UPDATE ${t.table('_wsmirror_tables')} SET last_error_code = 'UPSTREAM_BAD_REQUEST', last_error = ${p[0]}, last_error_at = ${p[1]} WHERE table_name = 'fine'`,
      [hostile, new Date().toISOString()]);
    const shown = await status();
    expect(shown.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(shown.text).toContain('bad \\u001b[31mRED');
    expect(shown.text).not.toMatch(/^FAKE/m);
  }, 120_000);

  it('backfilling: an interrupted backfill shows its progress', async () => {
    await ws.createTable('s', 'big', { hasHistory: true }, FIELDS);
    await ws.createRecords('s', 'big', rows(10_000));
    let kill = () => {};
    proxy.rewrite = (path) => {
      const offset = /[?&]offset=(\d+)/.exec(path);
      // A scan page (the size estimate probes with limit=1) past the middle.
      if (path.includes('/tables/big/records?') && path.includes('limit=100') && offset && Number(offset[1]) >= 5_000) kill();
      return undefined;
    };
    const killed = await runWsmirror(['sync'], env, { onSpawn: (k) => (kill = k) });
    proxy.rewrite = undefined;
    expect(killed.signal).toBe('SIGKILL');

    const { res, json, text } = await status();
    // Never pulled to a current state, and no process syncs it now: it needs a sync.
    expect(res.code, res.stdout).toBe(1);
    expect(json.attention).toEqual([expect.stringContaining('s.big has never been pulled to a current state')]);
    const big = table(json, 's.big');
    expect(big.status).toBe('backfilling');
    expect(big.state).toBe('needs_backfill');
    expect(big.progress!.estimatedRows).toBeGreaterThanOrEqual(9_900);
    expect(big.progress!.percent).toBeGreaterThan(5);
    expect(big.progress!.percent).toBeLessThan(60);
    expect(big.progress!.rowsRead).toBe(big.rows);
    const cells = text.split('\n').find((l) => l.startsWith('s.big '))!.split(/ {2,}/);
    expect(cells[3]).toBe(`backfilling ${big.progress!.percent}%`);
    expect(text).toMatch(/s\.big: backfill at \d+ records of about \d+, begun /);
  }, 120_000);

  it('wsmirror run stores when it starts the next cycle; status shows it', async () => {
    let child: import('node:child_process').ChildProcess | undefined;
    const started = Date.now();
    const running = runWsmirror(['run'], { ...env, WSMIRROR_SCHEDULE: '1h' }, { onSpawn: (_kill, c) => (child = c) });
    let json: StatusJson | undefined;
    for (let i = 0; i < 120 && !json?.cycle.nextRunAt; i++) {
      await new Promise((r) => setTimeout(r, 500));
      json = (await status()).json;
    }
    child!.kill('SIGTERM');
    expect((await running).code).toBe(0);
    const next = Date.parse(json!.cycle.nextRunAt!);
    // An interval schedule starts the next cycle an hour after this one started.
    expect(next).toBeGreaterThan(started + 3_500_000);
    expect(next).toBeLessThan(Date.now() + 3_600_000);
    // The interrupted backfill finished in the first cycle.
    expect(table(json!, 's.big').status).toBe('ready');
    expect((await status()).text).toMatch(/next run: \S+ \(in (59m|1h 00m)/);
  }, 120_000);

  it('failing: a table refused before its SQL table was made is listed, with its reason, until it is made', async () => {
    await ws.createTable('s', 'odd', { hasHistory: true }, [...FIELDS, { name: 'fldbad', type: 'string', labels: { '': 'Bad' } }]);
    await ws.createRecords('s', 'odd', rows(2));
    // A field name outside the API's rule: the table is refused whole, and never created.
    proxy.rewrite = (path, body) => (/\/workspace\/[a-z0-9]+$/.test(path.split('?')[0]!) ? body.replaceAll('"name":"fldbad"', '"name":"fld-bad"') : undefined);
    const before = Date.now();
    const refused = await runWsmirror(['sync'], env);
    proxy.rewrite = undefined;
    expect(refused.code).toBe(1);

    const { res, json, text } = await status();
    expect(res.code).toBe(1);
    const odd = table(json, 's.odd');
    expect(odd).toMatchObject({
      module: 's', name: 'odd', sqlName: null, mode: 'history', state: 'needs_backfill', status: 'failing',
      rows: null, lastPullAt: null, currentAsOf: null, lagMs: null, progress: null,
      lastError: { code: 'INVALID_RESPONSE', message: expect.stringContaining('field name "fld-bad"') },
    });
    expect(Date.parse(odd.lastError!.at)).toBeGreaterThanOrEqual(before);
    expect(json.attention).toContainEqual(expect.stringContaining('s.odd is failing since'));
    const cells = text.split('\n').find((l) => l.startsWith('s.odd '))!.split(/ {2,}/);
    expect(cells.slice(1, 5)).toEqual(['-', 'history', 'failing', '?']);
    expect(text).toMatch(/s\.odd: failing since \S+ \(INVALID_RESPONSE\): .*field name "fld-bad"/);

    // The list as an earlier version stored it (no time, no module and table apart): the last
    // failed cycle's time stands for the refusal's.
    const cursor = `${t.table('_wsmirror_cursors')} WHERE name = 'schema:refused-tables'`;
    const [stored] = await t.sql<{ value: string }>(`SELECT value FROM ${cursor}`);
    const earlier = (JSON.parse(stored!.value) as Record<string, unknown>[]).map(({ tableId, table: label, mode, code, message }) => ({ tableId, table: label, mode, code, message }));
    await t.sql(`UPDATE ${t.table('_wsmirror_cursors')} SET value = ${t.dialect === 'postgres' ? '$1' : '?'} WHERE name = 'schema:refused-tables'`, [JSON.stringify(earlier)]);
    const old = await status();
    expect(table(old.json, 's.odd')).toMatchObject({ module: 's', name: 'odd', sqlName: null, status: 'failing', lastError: { code: 'INVALID_RESPONSE', at: old.json.cycle.lastFailureAt } });

    // Good names again: the table is made, and listed as any other.
    const made = await runWsmirror(['sync'], env);
    expect(made.code, made.stderr).toBe(0);
    const healed = await status();
    expect(healed.res.code, healed.res.stdout).toBe(0);
    expect(table(healed.json, 's.odd')).toMatchObject({ sqlName: 's__odd', status: 'ready', rows: 2, lastError: null });
  }, 120_000);
});
