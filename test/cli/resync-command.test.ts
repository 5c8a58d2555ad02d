import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { mirrorRows, upstreamRows } from '../helpers/mirror-snapshot.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror resync [TABLE…]` as a real process: a table that drifted from upstream is mirrored
 * again, its local edits still in the outbox keep their values, and the other tables are pulled
 * as usual from their cursors.
 */
forEachDialect('wsmirror resync (real processes)', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let t: TestMirror;
  let env: Record<string, string>;
  let ids: string[];
  const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');

  beforeAll(async () => {
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'people', { hasHistory: true }, [
      { name: 'name', type: 'string', labels: { '': 'Name' } },
      { name: 'status', type: 'choice', labels: { '': 'Status' }, options: [{ name: 'Open' }, { name: 'Won' }] },
    ]);
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createTable('crm', 'plain', { hasHistory: false }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    ids = await ws.createRecords('crm', 'people', Array.from({ length: 40 }, (_, i) => ({ name: `p${i}` })));
    await ws.createRecords('crm', 'notes', [{ body: 'n1' }, { body: 'n2' }]);
    await ws.createRecords('crm', 'plain', [{ body: 'x' }]);
    t = await fresh();
    // No lookback: the records' creation, seconds before the drift below, is not read again.
    env = daemonEnv(emu, t, { WSMIRROR_SYNC_LOOKBACK: '0s' });
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
  });
  afterAll(async () => emu?.close());

  const people = () => t.table('crm__people');
  const outbox = () => t.sql<{ record_id: number | string; status: string; column_name: string | null }>(
    `SELECT "record_id", "status", "column_name" FROM ${t.table('_wsmirror_outbox')} ORDER BY "entry_id"`,
  );

  it('mirrors a drifted table again, keeps its pending local edits, and pulls the others from their cursors', async () => {
    // A local edit upstream refuses: it stays in the outbox (failed), its value stays local.
    await t.sql(`UPDATE ${people()} SET "status" = 'no-such-option' WHERE "id" = ${p(1)}`, [Number(ids[0])]);
    const pushed = await runWsmirror(['sync'], env);
    expect(pushed.stderr).not.toContain('people: ');
    expect((await outbox()).map((e) => [Number(e.record_id), e.status])).toEqual([[Number(ids[0]), 'failed']]);

    // Drift the daemon cannot see: rows gone from the mirror with no outbox entry, and a value
    // changed behind its back.
    await t.sql(`DELETE FROM ${people()} WHERE "id" IN (${p(1)}, ${p(2)})`, [Number(ids[1]), Number(ids[2])]);
    await t.sql(`UPDATE ${people()} SET "name" = 'drifted' WHERE "id" = ${p(1)}`, [Number(ids[3])]);
    await t.sql(`DELETE FROM ${t.table('_wsmirror_outbox')} WHERE "status" = 'pending'`);
    const plainSync = await runWsmirror(['sync'], env);
    expect(plainSync.code, plainSync.stderr).toBe(0);
    expect((await mirrorRows(t, 'crm', 'people')).size).toBe(38);

    const res = await runWsmirror(['resync', 'crm.people', '--json'], env);
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout) as { tables: { table: string; action: string; upserted: number }[] };
    expect(Object.fromEntries(report.tables.map((x) => [x.table, x.action]))).toEqual({
      'crm.notes': 'changes', 'crm.people': 'backfill', 'crm.plain': 'scan',
    });
    expect(report.tables.find((x) => x.table === 'crm.people')!.upserted).toBe(40);

    const actual = await mirrorRows(t, 'crm', 'people');
    const expected = upstreamRows(await ws.allRecords('crm', 'people'), { name: 'string', status: 'choice' });
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    // Every row as upstream has it, but the column with an edit still in the outbox.
    expect(actual.get(ids[0]!)).not.toEqual(expected.get(ids[0]!));
    const [edited] = await t.sql<{ status: string }>(`SELECT "status" FROM ${people()} WHERE "id" = ${p(1)}`, [Number(ids[0])]);
    expect(edited!.status).toBe('no-such-option');
    actual.delete(ids[0]!);
    expected.delete(ids[0]!);
    expect(Object.fromEntries(actual)).toEqual(Object.fromEntries(expected));
    expect((await outbox()).map((e) => [Number(e.record_id), e.status])).toEqual([[Number(ids[0]), 'failed']]);
  }, 120_000);

  it('refuses an unknown table with exit 2, naming the mirrored ones, and changes nothing', async () => {
    const res = await runWsmirror(['resync', 'crm.nope'], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('no mirrored table "crm.nope"');
    expect(res.stderr).toContain('crm.notes, crm.people, crm.plain');
    const states = await t.sql<{ state: string }>(`SELECT "state" FROM ${t.table('_wsmirror_tables')}`);
    expect(states.every((s) => s.state === 'ready')).toBe(true);
  });

  it('--no-sync only marks the tables (by SQL name too); status shows them backfilling until the next cycle', async () => {
    const res = await runWsmirror(['resync', '--no-sync', 'crm__notes'], mirrorEnv(t));
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('marked for a new backfill: crm.notes');
    const status = JSON.parse((await runWsmirror(['status', '--json'], mirrorEnv(t))).stdout) as { tables: { table: string; status: string }[] };
    expect(status.tables.find((x) => x.table === 'crm.notes')!.status).toBe('backfilling');
    const next = await runWsmirror(['sync', '--json'], env);
    expect(next.code, next.stderr).toBe(0);
    const report = JSON.parse(next.stdout) as { tables: { table: string; action: string }[] };
    expect(report.tables.find((x) => x.table === 'crm.notes')!.action).toBe('backfill');
  }, 60_000);
});
