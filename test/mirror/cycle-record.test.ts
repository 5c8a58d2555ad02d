import { expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';

/**
 * A cycle's record (its outcome, and the schema cursor of an idle poll) is one write of a few
 * statements, which Postgres receives as one simple query: all of it is stored, or none.
 */
forEachDialect('cycle record', ({ dialect, fresh }) => {
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
    if (dialect === 'sqlite') {
      await t.sql(`CREATE TRIGGER refuse BEFORE INSERT ON ${t.table('_wsmirror_cursors')} WHEN NEW.name = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    } else {
      await t.sql(`CREATE FUNCTION ${t.table('refuse')}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
      await t.sql(`CREATE TRIGGER refuse BEFORE INSERT ON ${t.table('_wsmirror_cursors')} FOR EACH ROW WHEN (NEW.name = 'refused') EXECUTE FUNCTION ${t.table('refuse')}()`);
    }
    await expect(t.mirror.recordCycle({
      startedAt: '2026-11-24T09:00:00.000Z', finishedAt: '2026-11-24T09:00:01.000Z', problems: [], cursors: { schema: 'kept?', refused: 'x' },
    })).rejects.toThrow(/refused/);
    expect((await t.mirror.readSyncState()).cycle.lastStartedAt).toBe('2026-11-24T08:00:00.000Z');
    expect(await t.mirror.getCursor('schema')).toBeUndefined();
    // The connection is usable after the failed write.
    await t.mirror.setCursor('schema', 'after');
    expect(await t.mirror.getCursor('schema')).toBe('after');
  });
});
