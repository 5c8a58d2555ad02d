import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Offset paging while upstream inserts, updates and deletes records: whatever the pages do, a
 * finished backfill plus one more cycle leaves the mirror holding exactly upstream's records, and
 * a table with history needs no second read of the whole table for it.
 */
forEachDialect('pull: backfill while upstream records come and go', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('a finished backfill plus one more cycle holds exactly upstream\'s records', async () => {
    h = await startSyncHarness(dialect, { pageSize: 10, backfillConcurrency: 4 });
    await h.upstream.createModule('shop');
    const tables = ['hist', 'plain'] as const;
    const ids: Record<(typeof tables)[number], string[]> = { hist: [], plain: [] };
    for (const table of tables) {
      await h.upstream.createTable('shop', table, { hasHistory: table === 'hist' }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
      ids[table] = await h.upstream.createRecords('shop', table, Array.from({ length: 600 }, (_, i) => ({ qty: i })));
    }

    // Slow answers make the backfill long enough for the changes below to land between its pages.
    await h.upstream.setFaults({ latencyMs: 4 });
    let state = 11;
    const random = (below: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % below;
    };
    let stop = false;
    let changes = 0;
    const churn = (async () => {
      while (!stop) {
        for (const table of tables) {
          const list = ids[table];
          // Mostly low ids: those move every later offset.
          const [gone] = list.splice(random(Math.min(list.length, 60)), 1);
          await h.upstream.deleteRecords('shop', table, [gone!]);
          list.push(...(await h.upstream.createRecords('shop', table, [{ qty: -1 }])));
          await h.upstream.updateRecords('shop', table, [{ id: list[random(list.length)], qty: 1000 + changes }]);
          changes++;
        }
      }
    })();

    const first = await h.sync();
    stop = true;
    await churn;
    expect(first.tables.map((t) => t.action)).toEqual(['backfill', 'scan']);
    expect(changes).toBeGreaterThan(5);
    await h.upstream.clearFaults();

    const second = await h.sync();
    expect(second.tables.map((t) => t.action)).toEqual(['changes', 'scan']);
    await h.expectConverged('shop', 'hist');
    await h.expectConverged('shop', 'plain');
  }, 120_000);
});
