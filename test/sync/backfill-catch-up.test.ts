import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * The catch-up after a backfill reads again only the changes the scan may have missed
 * (src/sync/backfill-window.ts): rows changed within the lookback before the backfill are read
 * once, and changes made during and after it still arrive.
 */
forEachDialect('pull: catch-up after a backfill', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('does not read again the rows of a table filled just before its backfill', async () => {
    h = await startSyncHarness(dialect, { pageSize: 50 });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'fresh', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    const ids = await h.upstream.createRecords('shop', 'fresh', Array.from({ length: 230 }, (_, i) => ({ qty: i })));
    await h.upstream.updateRecords('shop', 'fresh', [{ id: ids[0]!, qty: -1 }]);

    const first = await h.sync();
    expect(first.tables).toEqual([expect.objectContaining({ action: 'backfill', upserted: 230 })]);
    await h.expectConverged('shop', 'fresh');

    // Changes after the backfill: each arrives with the next cycle, which (still within the
    // lookback) also reads the backfill's window again, as every poll does.
    await h.upstream.updateRecords('shop', 'fresh', [{ id: ids[5]!, qty: 555 }]);
    await h.upstream.deleteRecords('shop', 'fresh', [ids[6]!]);
    const second = await h.sync();
    expect(second.tables).toEqual([expect.objectContaining({ action: 'changes' })]);
    await h.expectConverged('shop', 'fresh');
  });
});
