import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A backfill estimates its table's size for its progress with small requests. It began with a
 * page of 100 whole records, so a table that fits in one page was read twice (and a page of large
 * records held twice at once); one record at offset 100 tells whether there is more than a page.
 */
forEachDialect('pull: the size estimate of a backfill', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  const recordReads = (h: SyncHarness, table: string) => h.proxy!.seen
    .filter((r) => r.path.startsWith(`/api/v1/workspace/${h.emu.workspaceId}/modules/shop/tables/${table}/records?`))
    .map((r) => new URL(r.path, 'http://x').searchParams)
    .map((q) => ({ limit: Number(q.get('limit')), offset: Number(q.get('offset')) }));

  it('reads the records of a table that fits in a page once', async () => {
    h = await startSyncHarness(dialect, {}, { proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [field('name', 'string')]);
    await h.upstream.createRecords('shop', 'items', Array.from({ length: 30 }, (_, i) => ({ name: `item ${i}` })));
    await h.sync();
    const reads = recordReads(h, 'items');
    // The scan's own page, and one record past it for the estimate.
    expect(reads.filter((r) => r.limit > 1)).toEqual([{ limit: 100, offset: 0 }]);
    expect(reads.filter((r) => r.limit === 1)).toEqual([{ limit: 1, offset: 100 }]);
    await h.expectConverged('shop', 'items');
  });

  it('still estimates a table of more than a page with one-record requests', async () => {
    h = await startSyncHarness(dialect, {}, { proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'lines', { hasHistory: true }, [field('qty', 'number')]);
    await h.upstream.createRecords('shop', 'lines', Array.from({ length: 250 }, (_, i) => ({ qty: i })));
    let estimated: number | null | undefined;
    const { SyncEngine } = await import('../../src/sync/index.ts');
    const engine = new SyncEngine({
      client: h.client, mirror: h.tm.mirror,
      observer: { scanStarted: (_table, progress) => { estimated = progress.estimatedRows; } },
    });
    expect((await engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    expect(estimated).toBe(250);
    const reads = recordReads(h, 'lines');
    // The first page is the scan's alone (its window may ask past the end: 297, 396…).
    expect(reads.filter((r) => r.limit > 1 && r.offset === 0)).toHaveLength(1);
    expect(reads.filter((r) => r.limit === 1).length).toBeGreaterThan(0);
    await h.expectConverged('shop', 'lines');
  });
});
