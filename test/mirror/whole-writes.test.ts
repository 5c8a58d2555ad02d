import { expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * A cycle's record (its outcome, and the schema cursor of an idle poll) is one write of a few
 * statements, which Postgres receives as one simple query; a batch's cursor and table state go
 * with its COMMIT. Either way, all of a write is stored, or none of it.
 */

/** A cursor named `refused` that the database refuses, as a full disk or a lost lock would. */
async function refuseCursor(t: TestMirror): Promise<void> {
  if (t.dialect === 'sqlite') {
    await t.sql(`CREATE TRIGGER refuse BEFORE INSERT ON ${t.table('_wsmirror_cursors')} WHEN NEW.name = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
  } else {
    await t.sql(`CREATE FUNCTION ${t.table('refuse')}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
    // Executable by its owner only: a trigger of the daemon's own role (postgres/foreign-triggers.ts).
    await t.sql(`REVOKE ALL ON FUNCTION ${t.table('refuse')}() FROM PUBLIC`);
    await t.sql(`CREATE TRIGGER refuse BEFORE INSERT ON ${t.table('_wsmirror_cursors')} FOR EACH ROW WHEN (NEW.name = 'refused') EXECUTE FUNCTION ${t.table('refuse')}()`);
  }
}
forEachDialect('writes that commit whole', ({ fresh }) => {
  it('stores the outcome and the cursors together, replaces the values of an earlier cycle, and clears what it sets to null', async () => {
    const t = await fresh();
    await t.mirror.recordCycle({ startedAt: '2026-11-24T08:00:00.000Z', finishedAt: '2026-11-24T08:00:01.000Z', problems: [], nextRunAt: '2026-11-24T08:00:02.000Z', cursors: { schema: 'c1' } });
    await t.mirror.recordCycle({ startedAt: '2026-11-24T08:00:02.000Z', finishedAt: '2026-11-24T08:00:03.000Z', problems: ["crm.deals: it's gone \\ $1"], nextRunAt: null, cursors: { schema: 'c2' } });
    const { cycle } = await t.mirror.readSyncState();
    expect(cycle).toEqual({
      lastStartedAt: '2026-11-24T08:00:02.000Z',
      lastSuccessAt: '2026-11-24T08:00:01.000Z',
      lastFailureAt: '2026-11-24T08:00:03.000Z',
      lastFailure: "crm.deals: it's gone \\ $1",
      nextRunAt: null,
    });
    expect(await t.mirror.getCursor('schema')).toBe('c2');
  });

  it('stores nothing when one of its statements fails', async () => {
    const t = await fresh();
    await t.mirror.recordCycle({ startedAt: '2026-11-24T08:00:00.000Z', finishedAt: '2026-11-24T08:00:01.000Z', problems: [] });
    // A cursor the database refuses, written after the outcome in the same record.
    await refuseCursor(t);
    await expect(t.mirror.recordCycle({
      startedAt: '2026-11-24T09:00:00.000Z', finishedAt: '2026-11-24T09:00:01.000Z', problems: [], cursors: { schema: 'kept?', refused: 'x' },
    })).rejects.toThrow(/refused/);
    expect((await t.mirror.readSyncState()).cycle.lastStartedAt).toBe('2026-11-24T08:00:00.000Z');
    expect(await t.mirror.getCursor('schema')).toBeUndefined();
    // The connection is usable after the failed write.
    await t.mirror.setCursor('schema', 'after');
    expect(await t.mirror.getCursor('schema')).toBe('after');
  });

  it('commits no row of a batch whose cursor the database refuses at commit, and the next write goes through', async () => {
    const t = await fresh();
    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', [field('fa', 'title', 'string')])])));
    await refuseCursor(t);
    await expect(t.mirror.applyRows('t1', { upserts: [{ id: '1', values: { title: 'a' } }], cursors: { refused: 'x' }, pulled: { currentAsOf: '2026-11-24T09:00:00.000Z' } }))
      .rejects.toThrow(/refused/);
    const deals = (await t.mirror.readCatalog()).tables[0]!.sqlName;
    expect(await t.sql(`SELECT id FROM ${t.table(deals)}`)).toEqual([]);
    expect((await t.mirror.readSyncState()).tables[0]!.currentAsOf).toBeNull();
    await t.mirror.applyRows('t1', { upserts: [{ id: '2', values: { title: 'b' } }], cursors: { kept: 'y' } });
    expect((await t.sql<{ id: unknown }>(`SELECT id FROM ${t.table(deals)}`)).map((r) => Number(r.id))).toEqual([2]);
    expect(await t.mirror.getCursor('kept')).toBe('y');
  });
});
