import { afterEach, expect, it } from 'vitest';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Counts are rows, not writes: a backfill's catch-up re-reads the records its scan just wrote
 * (the change feed starts before the scan, minus the lookback), and those must not count twice
 * in the cycle report nor in the rows-applied metric.
 */
const FIELDS = [{ name: 'name', type: 'string' as const, labels: { '': 'Name' } }];

forEachDialect('exact counts', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('a backfill of N fresh records reports N rows upserted, in the report and to the observer', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('m');
    await h.upstream.createTable('m', 'hist', { hasHistory: true }, FIELDS);
    await h.upstream.createTable('m', 'plain', { hasHistory: false }, FIELDS);
    const ids = await h.upstream.createRecords('m', 'hist', Array.from({ length: 2_500 }, (_, i) => ({ name: `r${i}` })));
    await h.upstream.createRecords('m', 'plain', Array.from({ length: 700 }, (_, i) => ({ name: `p${i}` })));

    const applied = new Map<string, number>();
    const engine = new SyncEngine({
      client: h.client,
      mirror: h.tm.mirror,
      observer: {
        rowsApplied: (table, operation, count) => applied.set(`${table} ${operation}`, (applied.get(`${table} ${operation}`) ?? 0) + count),
      },
    });
    const first = await engine.runCycle({ forceFullScan: true });
    const counts = Object.fromEntries(first.tables.map((t) => [t.table, [t.action, t.upserted, t.deleted]]));
    expect(counts).toEqual({ 'm.hist': ['backfill', 2_500, 0], 'm.plain': ['scan', 700, 0] });
    expect(Object.fromEntries(applied)).toEqual({ 'm.hist upsert': 2_500, 'm.plain upsert': 700 });

    // Incremental: the poll's changes, each row once even when it changed several times.
    await h.upstream.updateRecords('m', 'hist', ids.slice(0, 10).map((id) => ({ id, name: 'x' })));
    await h.upstream.updateRecords('m', 'hist', ids.slice(0, 10).map((id) => ({ id, name: 'y' })));
    await h.upstream.deleteRecords('m', 'hist', ids.slice(20, 25));
    applied.clear();
    const second = await engine.runCycle();
    const hist = second.tables.find((t) => t.table === 'm.hist')!;
    expect(hist.deleted).toBe(5);
    // Every row written once; the lookback may add rows of the previous cycle's last seconds.
    expect(hist.upserted).toBeLessThanOrEqual(2_500 - 5);
    expect(applied.get('m.hist upsert')).toBe(hist.upserted);
    expect(applied.get('m.hist delete')).toBe(5);
    await h.expectConverged('m', 'hist');
  }, 120_000);
});
