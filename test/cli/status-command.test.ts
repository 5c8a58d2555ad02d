import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachDialect, testPgUrl, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { editsWaitingForARefusedRow } from '../helpers/waiting-edits.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** `wsmirror status` as a real process, over a mirror made by a real `wsmirror sync`. */

const HOUR = 3_600_000;

interface StatusJson {
  mirror: string;
  schema: string | null;
  checkedAt: string;
  tables: {
    table: string; module: string; name: string; tableId: string; sqlName: string; mode: string; state: string;
    rows: number | null; lastPullAt: string | null; currentAsOf: string | null; lagMs: number | null;
    outbox: { pending: number; failed: number; conflict: number; waiting: number };
  }[];
  outbox: { pending: number; failed: number; conflict: number; waiting: number };
  oldestPendingAt: string | null;
  oldestPendingAgeMs: number | null;
}

/** Cells of the text table's line for one table (columns are separated by two spaces or more). */
function rowOf(text: string, table: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`${table} `));
  if (line === undefined) throw new Error(`no line for ${table} in:\n${text}`);
  return line.split(/ {2,}/);
}

forEachDialect('wsmirror status (real process)', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let t: TestMirror;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-status-'));
  let ids: Record<string, string>;
  let syncedBetween: [number, number];

  const param = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [
      { name: 'title', type: 'string', labels: { '': 'Title' } },
      { name: 'stage', type: 'choice', labels: { '': 'Stage' }, options: [{ name: 'Open' }, { name: 'Won' }] },
    ]);
    await ws.createTable('crm', 'notes', { hasHistory: false }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a', stage: 'Open' }, { title: 'b' }, { title: 'c' }]);
    await ws.createRecords('crm', 'notes', [{ body: 'x' }]);

    t = await fresh();
    const before = Date.now();
    const sync = await runWsmirror(['sync'], daemonEnv(emu, t), { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    syncedBetween = [before, Date.now()];

    const tables = await t.sql<{ table_id: string; sql_name: string }>(`SELECT "table_id", "sql_name" FROM ${t.table('_wsmirror_tables')}`);
    ids = Object.fromEntries(tables.map((r) => [r.sql_name, r.table_id]));
    // Outbox entries as the triggers and the push step would leave them.
    const entries: [string, string, string][] = [
      [ids['crm__deals']!, 'crm__deals', 'pending'],
      [ids['crm__deals']!, 'crm__deals', 'pending'],
      [ids['crm__deals']!, 'crm__deals', 'failed'],
      [ids['crm__notes']!, 'crm__notes', 'conflict'],
      ['t999', 'crm__gone', 'pending'], // a table no longer mirrored
    ];
    for (const [tableId, sqlTable, status] of entries) {
      await t.sql(
        `INSERT INTO ${t.table('_wsmirror_outbox')} ("table_id", "sql_table", "record_id", "operation", "column_name", "new_value", "status")
         VALUES (${param(1)}, ${param(2)}, 1, 'update', 'title', '"x"', ${param(3)})`,
        [tableId, sqlTable, status],
      );
    }
    // The oldest pending edit was made an hour ago.
    await t.sql(`UPDATE ${t.table('_wsmirror_outbox')} SET "changed_at" = ${param(1)} WHERE "sql_table" = 'crm__gone'`, [
      new Date(Date.now() - HOUR - 30_000).toISOString(),
    ]);
    // The notes table was last pulled two hours ago.
    await t.sql(`UPDATE ${t.table('_wsmirror_tables')} SET "last_pull_at" = ${param(1)}, "current_as_of" = ${param(2)} WHERE "table_id" = ${param(3)}`, [
      new Date(Date.now() - 2 * HOUR - 3 * 60_000 - 10_000).toISOString(), new Date(Date.now() - 2 * HOUR - 3 * 60_000 - 10_000).toISOString(), ids['crm__notes']!,
    ]);
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('prints an aligned table of mode, state, rows, last pull, lag and outbox counts, without any upstream setting', async () => {
    const res = await runWsmirror(['status'], mirrorEnv(t), { cwd });
    // Failed and conflicting edits, and a table lagging by hours, need attention.
    expect(res.code, res.stderr).toBe(1);
    const text = res.stdout;
    expect(text.split('\n')[0]).toBe(dialect === 'sqlite' ? `mirror: ${t.url}` : `mirror: ${t.url} (schema ${t.pgSchema})`);

    const deals = rowOf(text, 'crm.deals');
    expect(deals).toEqual(['crm.deals', 'crm__deals', 'history', 'ready', '3', expect.any(String), expect.any(String), '2', '1', '0']);
    const pulled = Date.parse(deals[5]!);
    expect(pulled).toBeGreaterThanOrEqual(syncedBetween[0]);
    expect(pulled).toBeLessThanOrEqual(syncedBetween[1]);
    expect(deals[6]).toMatch(/^[0-9]+m?s$/); // a lag of seconds (or less)

    const notes = rowOf(text, 'crm.notes');
    expect(notes).toEqual(['crm.notes', 'crm__notes', 'fullscan', 'ready', '1', expect.any(String), '2h 03m', '0', '0', '1']);

    // Aligned: every column starts (left-aligned) or ends (right-aligned) at its header's place.
    const lines = text.split('\n');
    const header = lines.find((l) => l.startsWith('TABLE'))!;
    const dealsLine = lines.find((l) => l.startsWith('crm.deals '))!;
    const notesLine = lines.find((l) => l.startsWith('crm.notes '))!;
    expect(dealsLine.indexOf('crm__deals')).toBe(header.indexOf('SQL TABLE'));
    expect(notesLine.indexOf('fullscan')).toBe(header.indexOf('MODE'));
    expect(dealsLine.indexOf(' 3 ') + 2).toBe(header.indexOf('ROWS') + 'ROWS'.length);
    expect(notesLine.length).toBe(header.length);

    expect(text).toContain('outbox: 3 pending, 1 failed, 1 conflict (oldest pending edit 1h 00m old)');
    expect(text).toContain('1 of them belong to tables no longer mirrored');
    expect(text).not.toContain('wait for rows inserted here');
    expect(text).toContain('needs attention:\n  - crm.notes lags upstream by more than 900 s\n  - 1 failed and 1 conflicting local edits');
    expect(res.stderr).toBe('');
  });

  it('prints a stable JSON document with --json', async () => {
    const res = await runWsmirror(['status', '--json'], mirrorEnv(t), { cwd });
    expect(res.code, res.stderr).toBe(1);
    const report = JSON.parse(res.stdout) as StatusJson;
    expect(Object.keys(report)).toEqual([
      'mirror', 'schema', 'checkedAt', 'tables', 'outbox', 'outboxUnreadable', 'oldestPendingAt', 'oldestPendingAgeMs', 'cycle', 'filesystem', 'syncProcess', 'attention',
    ]);
    expect(report.oldestPendingAgeMs).toBe(Date.parse(report.checkedAt) - Date.parse(report.oldestPendingAt!));
    expect(report.oldestPendingAgeMs).toBeGreaterThan(HOUR);
    expect(report.mirror).toBe(t.url);
    expect(report.schema).toBe(t.pgSchema ?? null);
    expect(report.outbox).toEqual({ pending: 3, failed: 1, conflict: 1, waiting: 0 });
    expect(report.tables.map((x) => x.table)).toEqual(['crm.deals', 'crm.notes']);
    const [deals, notes] = report.tables;
    expect(deals).toEqual({
      table: 'crm.deals', module: 'crm', name: 'deals', tableId: ids['crm__deals'], sqlName: 'crm__deals',
      mode: 'history', state: 'ready', status: 'ready', rows: 3, missing: false, foreignTrigger: false, lastPullAt: expect.any(String), currentAsOf: expect.any(String),
      lagMs: expect.any(Number), lagBoundMs: 300_000, progress: null, lastError: null,
      outbox: { pending: 2, failed: 1, conflict: 0, waiting: 0 },
    });
    expect(notes).toMatchObject({ mode: 'fullscan', rows: 1, outbox: { pending: 0, failed: 0, conflict: 1 } });
    for (const x of report.tables) {
      // Lag as /metrics defines it: since the start of the last successful pull.
      expect(x.lagMs).toBe(Date.parse(report.checkedAt) - Date.parse(x.currentAsOf!));
      expect(Date.parse(x.currentAsOf!)).toBeLessThanOrEqual(Date.parse(x.lastPullAt!));
    }
    expect(notes!.lagMs).toBeGreaterThan(2 * HOUR);
    expect(Date.parse(deals!.lastPullAt!)).toBeGreaterThanOrEqual(syncedBetween[0]);
  });

  it('says so when nothing is mirrored yet', async () => {
    const empty = await fresh();
    const res = await runWsmirror(['status'], mirrorEnv(empty), { cwd });
    // No cycle has completed: a monitor must not pass a mirror that was never synced.
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toContain('no tables mirrored yet');
    expect(res.stdout).toContain('needs attention:\n  - no cycle has completed yet (no sync has run to its end): run wsmirror sync, or start the daemon (wsmirror run)');
    expect(res.stdout).toContain('outbox: 0 pending, 0 failed, 0 conflict');
    const json = JSON.parse((await runWsmirror(['status', '--json'], mirrorEnv(empty), { cwd })).stdout) as StatusJson;
    expect(json.tables).toEqual([]);
  });

  it('reads a mirror of an older catalog layout that no daemon has migrated yet (no table state)', async () => {
    const old = await fresh();
    const sync = await runWsmirror(['sync'], daemonEnv(emu, old), { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    for (const column of ['current_as_of', 'last_error_code', 'last_error', 'last_error_at']) {
      await old.sql(`ALTER TABLE ${old.table('_wsmirror_tables')} DROP COLUMN "${column}"`);
    }
    await old.sql(`UPDATE ${old.table('_wsmirror_meta')} SET "value" = '3' WHERE "key" = 'catalog_version'`);
    const res = await runWsmirror(['status', '--json'], mirrorEnv(old), { cwd });
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout) as StatusJson;
    expect(report.tables.map((x) => [x.table, x.state, x.lagMs])).toEqual([['crm.deals', 'ready', null], ['crm.notes', 'ready', null]]);
    const text = await runWsmirror(['status'], mirrorEnv(old), { cwd });
    expect(rowOf(text.stdout, 'crm.deals')[6]).toBe('never');
  });

  it('warns on stderr about misspelt WSMIRROR_* variables, keeping stdout clean', async () => {
    const res = await runWsmirror(['status', '--json'], { ...mirrorEnv(t), WSMIRROR_MIROR_URL: 'x' }, { cwd });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('WSMIRROR_MIROR_URL');
    expect(() => JSON.parse(res.stdout)).not.toThrow();
  });

  it.runIf(dialect === 'postgres')('exits 78 for a schema without a mirror, and does not create it', async () => {
    const schema = `wsm_test_nomirror_${randomBytes(6).toString('hex')}`;
    const res = await runWsmirror(['status'], { WSMIRROR_MIRROR_URL: testPgUrl!, WSMIRROR_PG_SCHEMA: schema }, { cwd });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain(schema);
    const client = new pg.Client({ connectionString: testPgUrl });
    await client.connect();
    try {
      expect((await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});

forEachDialect('wsmirror status (real process): edits waiting for a row inserted here', (dialect) => {
  let h: SyncHarness;
  afterAll(async () => h?.close());

  it('counts the pending edits that wait for another row\'s create, in all and per table, in text and JSON', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await editsWaitingForARefusedRow(h);

    const text = await runWsmirror(['status'], mirrorEnv(h.tm));
    // The refused create needs attention; the edits waiting for it are pending, not failed.
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/\noutbox: 4 pending, 1 failed, 0 conflict \(oldest pending edit [^)]+ old\)\n {2}3 of the pending edits wait for rows inserted here to be created upstream \(wsmirror outbox shows which\)\n/);

    const json = await runWsmirror(['status', '--json'], mirrorEnv(h.tm));
    const report = JSON.parse(json.stdout) as StatusJson;
    expect(report.outbox).toEqual({ pending: 4, failed: 1, conflict: 0, waiting: 3 });
    expect(report.tables.map((x) => [x.table, x.outbox])).toEqual([
      ['crm.companies', { pending: 1, failed: 1, conflict: 0, waiting: 1 }],
      ['crm.deals', { pending: 3, failed: 0, conflict: 0, waiting: 2 }],
    ]);
  }, 60_000);
});

describe('wsmirror status without a mirror', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-status-missing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 78 naming the missing SQLite file, and does not create it', async () => {
    const file = join(dir, 'nowhere.db');
    const res = await runWsmirror(['status'], { WSMIRROR_MIRROR_URL: `sqlite:${file}` }, { cwd: dir });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain(file);
    expect(res.stderr).toMatch(/does not exist/);
    expect(res.stdout).toBe('');
    expect(existsSync(file)).toBe(false);
  });

  it('uses the default ./wsmirror.db, and does not create that either', async () => {
    const res = await runWsmirror(['status', '--json'], {}, { cwd: dir });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain(join(dir, 'wsmirror.db'));
    expect(existsSync(join(dir, 'wsmirror.db'))).toBe(false);
  });

  it('exits 2 for an unknown flag', async () => {
    const res = await runWsmirror(['status', '--jsn'], {}, { cwd: dir });
    expect(res.code).toBe(2);
  });
});
