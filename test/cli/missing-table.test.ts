import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';
import { companiesAndNotes } from '../helpers/companies-and-notes.ts';

/**
 * A mirrored table whose SQL table was dropped by hand (`DROP TABLE crm__notes` in psql or
 * sqlite3), as real processes meet it: the other tables push and pull as usual, the table is
 * reported failing, naming its SQL table and what to do, `wsmirror check` fails naming it,
 * `outbox discard` works for its entries, `wsmirror resync` makes it again, and leaving it out
 * with the table patterns drops it from the mirror.
 */
interface SyncJson {
  push: { pushed?: number; failed?: number; error?: { message: string } };
  tables: { table: string; action: string; error?: { code: string; message: string } }[];
}
interface StatusJson {
  tables: {
    table: string; status: string; rows: number | null; missing: boolean; error?: string;
    lastPullAt: string | null; lastError: { code: string; message: string } | null;
  }[];
  attention: string[];
}
interface OutboxJson {
  entryId: number;
  table: string;
  recordId: number;
  operation: string;
  status: string;
  lastError: string | null;
}

forEachDialect('a mirrored table dropped by hand (real processes)', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let t: TestMirror;
  let env: Record<string, string>;
  let acme: number;
  let note: number;
  const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
  const notes = () => t.table('crm__notes');
  const dropNotes = () => t.sql(`DROP TABLE ${notes()}${dialect === 'postgres' ? ' CASCADE' : ''}`);
  const sync = async (extra: Record<string, string> = {}) => {
    const res = await runWsmirror(['sync', '--json'], { ...env, ...extra });
    return { ...res, report: JSON.parse(res.stdout) as SyncJson };
  };
  const status = async () => JSON.parse((await runWsmirror(['status', '--json'], mirrorEnv(t))).stdout) as StatusJson;
  const outbox = async () => JSON.parse((await runWsmirror(['outbox', '--json'], mirrorEnv(t))).stdout) as OutboxJson[];
  const notesState = async () => (await status()).tables.find((x) => x.table === 'crm.notes')!;

  beforeAll(async () => {
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    ({ acme, note } = await companiesAndNotes(ws));
    t = await fresh();
    env = daemonEnv(emu, t, { WSMIRROR_SYNC_LOOKBACK: '0s' });
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
  });
  afterAll(async () => emu?.close());

  it('with a pending local insert, blocks neither the push nor the pull of the others; the table fails, naming its SQL table', async () => {
    await t.sql(`INSERT INTO ${notes()} ("body", "company") VALUES ('local note', ${p(1)})`, [acme]);
    await t.sql(`INSERT INTO ${notes()} ("body") VALUES ('second note')`);
    await t.sql(`UPDATE ${notes()} SET "body" = 'edited here' WHERE "id" = ${p(1)}`, [note]);
    await t.sql(`UPDATE ${t.table('crm__companies')} SET "name" = 'Acme 2' WHERE "id" = ${p(1)}`, [acme]);
    // A create of the table the dropped one references: its settling renames references to it.
    await t.sql(`INSERT INTO ${t.table('crm__companies')} ("name") VALUES ('Local Co')`);
    await dropNotes();
    await ws.createRecords('crm', 'companies', [{ name: 'Initech' }]);
    // Before a cycle has met it, status reads what it can and says the table needs attention.
    const early = await runWsmirror(['status', '--json'], mirrorEnv(t));
    expect(early.code, early.stderr).toBe(1);
    expect((JSON.parse(early.stdout) as StatusJson).tables.map((x) => x.table)).toEqual(['crm.companies', 'crm.notes']);

    for (let cycle = 0; cycle < 2; cycle++) {
      const res = await sync();
      expect(res.code, res.stderr).toBe(1);
      expect(res.report.push.error, res.stderr).toBeUndefined();
      expect(res.stderr).not.toMatch(/does not exist|no such table/);
      const byTable = Object.fromEntries(res.report.tables.map((x) => [x.table, x]));
      expect(byTable['crm.companies']!.action).not.toBe('failed');
      expect(byTable['crm.notes']!.action).toBe('failed');
      expect(byTable['crm.notes']!.error!.message).toMatch(/crm__notes.*missing.*wsmirror resync crm\.notes/);
    }
    // The other table's edits went out, and its new record came in.
    const companies = await ws.allRecords('crm', 'companies');
    expect(companies.map((r) => r.values['name'])).toEqual(['Acme 2', 'Globex', 'Initech', 'Local Co']);
    expect((await t.sql(`SELECT "name" FROM ${t.table('crm__companies')} ORDER BY "id"`)).map((r) => r['name']))
      .toEqual(['Acme 2', 'Globex', 'Initech', 'Local Co']);
    // The dropped table's edits wait; nothing of them was sent.
    expect((await outbox()).map((e) => [e.table, e.operation, e.status]))
      .toEqual([['crm.notes', 'insert', 'pending'], ['crm.notes', 'insert', 'pending'], ['crm.notes', 'update', 'pending']]);
    expect((await ws.allRecords('crm', 'notes')).map((r) => r.values['body'])).toEqual(['n1']);

    const state = await notesState();
    expect(state.status).toBe('failing');
    expect(state.lastError!.message).toContain('crm__notes');
  }, 120_000);

  it('wsmirror check fails naming the table, exit 78', async () => {
    const text = await runWsmirror(['check'], env);
    expect(text.code, text.stderr).toBe(78);
    expect(text.stdout).toMatch(/^FAIL mirror: .*crm\.notes.*crm__notes.*missing/m);
    const json = await runWsmirror(['check', '--json'], env);
    expect(json.code).toBe(78);
    const report = JSON.parse(json.stdout) as { mirror: { problems: string[] } };
    expect(report.mirror.problems.filter((x) => x.includes('crm__notes'))).toHaveLength(1);
  }, 60_000);

  it('outbox discard drops entries of the missing table, inserts and updates', async () => {
    const [, insert, update] = await outbox();
    for (const entry of [insert!, update!]) {
      const res = await runWsmirror(['outbox', 'discard', String(entry.entryId)], daemonEnv(emu, t));
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toBe('');
    }
    expect((await outbox()).map((e) => e.operation)).toEqual(['insert']);
  }, 60_000);

  it('wsmirror resync makes the table again from upstream, with its capture and view; the lost insert fails, saying so', async () => {
    const res = await runWsmirror(['resync', 'crm.notes', '--json'], env);
    expect(res.code, res.stderr).toBe(0);
    expect((await t.sql(`SELECT "id", "body", "company" FROM ${notes()}`)).map((r) => [Number(r['id']), r['body'], Number(r['company'])]))
      .toEqual([[note, 'n1', acme]]);
    expect((await t.sql(`SELECT "company_label" FROM ${t.table('crm__notes_v')}`)).map((r) => r['company_label'])).toEqual(['Acme 2']);
    expect((await notesState()).status).toBe('ready');
    const [lost] = await outbox();
    expect(lost).toMatchObject({ operation: 'insert', status: 'failed' });
    expect(lost!.lastError).toMatch(/no longer in the mirror/);

    // Local edits are captured again.
    await t.sql(`INSERT INTO ${notes()} ("body") VALUES ('after resync')`);
    const discarded = await runWsmirror(['outbox', 'discard', String(lost!.entryId)], daemonEnv(emu, t));
    expect(discarded.code, discarded.stderr).toBe(0);
    const next = await sync();
    expect(next.code, next.stderr).toBe(0);
    expect((await ws.allRecords('crm', 'notes')).map((r) => r.values['body']).sort()).toEqual(['after resync', 'n1']);
    expect(await outbox()).toEqual([]);
  }, 120_000);

  it('without local edits, is failing, not ready, and its last pull stays', async () => {
    const before = await notesState();
    await dropNotes();
    const res = await sync();
    expect(res.code, res.stderr).toBe(1);
    const state = await notesState();
    expect(state.status).toBe('failing');
    expect(state.lastPullAt).toBe(before.lastPullAt);
    expect(state.lastError!.message).toMatch(/crm__notes.*missing/);
  }, 60_000);

  it('left out by the table patterns, leaves the mirror; included again, is made anew', async () => {
    const left = await sync({ WSMIRROR_TABLES_EXCLUDE: 'crm.notes' });
    expect(left.code, left.stderr).toBe(0);
    expect((await t.sql(`SELECT "sql_name" FROM ${t.table('_wsmirror_tables')} ORDER BY 1`)).map((r) => r['sql_name'])).toEqual(['crm__companies']);
    const back = await sync();
    expect(back.code, back.stderr).toBe(0);
    expect((await t.sql(`SELECT "body" FROM ${notes()} ORDER BY "id"`)).map((r) => r['body'])).toEqual(['n1', 'after resync']);
  }, 60_000);

  it('wsmirror status says at once that the SQL table is missing and what to do, before and after a cycle, without the database\'s error', async () => {
    await dropNotes();
    const missing = 'its SQL table crm__notes is missing from the mirror (dropped outside wsmirror); the table is neither pulled nor pushed, '
      + 'and its local edits wait in the outbox. wsmirror resync crm.notes makes it again and reads its records from upstream '
      + '(rows inserted here and not created upstream yet were lost with it), or leave it out with tables.exclude';
    for (const moment of ['before a cycle', 'after a cycle']) {
      if (moment === 'after a cycle') expect((await sync()).code).toBe(1);
      const text = await runWsmirror(['status'], mirrorEnv(t));
      expect(text.code, `${moment}: ${text.stderr}`).toBe(1);
      expect(text.stdout, moment).toMatch(/^crm\.notes +crm__notes +history +failing +\? /m);
      // Once below the table and once under "needs attention"; the cycle's own record aside.
      expect(text.stdout.split('\n').filter((line) => /^(  - )?crm\.notes: /.test(line)), moment)
        .toEqual([`crm.notes: ${missing}`, `  - crm.notes: ${missing}`]);
      expect(text.stdout, moment).not.toMatch(/cannot count|no such table|does not exist/);
      const json = await runWsmirror(['status', '--json'], mirrorEnv(t));
      const report = JSON.parse(json.stdout) as StatusJson;
      expect(report.tables.map((x) => [x.table, x.status, x.rows === null, x.missing, x.error]), moment).toEqual([
        ['crm.companies', 'ready', false, false, undefined], ['crm.notes', 'failing', true, true, missing],
      ]);
      expect(report.attention.filter((line) => line.startsWith('crm.notes')), moment).toEqual([`crm.notes: ${missing}`]);
    }
  }, 60_000);
});
