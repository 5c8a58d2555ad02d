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

  it('remembers at most 50,000 changes of the window: the pre-scan poll stops there, and the catch-up reads the rest again', { timeout: 120_000 }, async () => {
    // A wide lookback keeps every change of the (slow to create) table inside the backfill's window.
    h = await startSyncHarness(dialect, { pageSize: 100, lookbackMs: 3_600_000 });
    const CAP = 50_000;
    const beyond = 250;
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'big', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    await h.upstream.createRecords('shop', 'big', Array.from({ length: CAP + beyond }, (_, i) => ({ qty: i })), 5000);

    const first = await h.sync();
    expect(first.tables).toEqual([expect.objectContaining({ action: 'backfill', upserted: CAP + beyond })]);
    await h.expectConverged('shop', 'big');

    // Requests in order: the probe (one change), the pre-scan poll, the scan, the catch-up.
    const names = h.requests.map((r) => r.endpoint);
    const scanStart = names.indexOf('listRecords');
    const preScanPages = names.slice(0, scanStart).filter((n) => n === 'listRecordChanges').length - 1;
    // The poll stopped on the first page past the cap instead of reading the window to its end.
    expect(preScanPages).toBe(CAP / 100 + 1);
    // The window's last changes were not remembered: the catch-up reads their records again (one
    // read per page of 100 changes), and no other.
    const catchUp = names.slice(names.indexOf('listRecordChanges', scanStart));
    expect(catchUp.filter((n) => n === 'listRecords')).toHaveLength(Math.ceil(beyond / 100));
  });
});
