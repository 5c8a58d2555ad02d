import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const FIELDS = [
  { name: 'name', type: 'string' as const, labels: { '': 'Name' } },
  { name: 'qty', type: 'number' as const, labels: { '': 'Quantity' } },
  { name: 'when', type: 'timestamp' as const, labels: { '': 'When' } },
];
const rows = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ name: `r${from + i}`, qty: from + i, when: new Date(1.7e12 + (from + i) * 1000).toISOString() }));

forEachDialect('pull: under injected faults', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('converges to the same mirror with 30 % faulty responses and latency', async () => {
    h = await startSyncHarness(dialect, { backfillConcurrency: 4 });
    await h.upstream.createModule('ops');
    await h.upstream.createTable('ops', 'events', { hasHistory: true }, FIELDS);
    await h.upstream.createTable('ops', 'assets', { hasHistory: false }, FIELDS);
    const eventIds = await h.upstream.createRecords('ops', 'events', rows(450));
    const assetIds = await h.upstream.createRecords('ops', 'assets', rows(260));

    // 30 % of API requests fail: 500s, 429s with Retry-After, and dropped connections.
    await h.upstream.setFaults({ errorRate: 0.17, rateLimitRate: 0.03, retryAfterSeconds: 1, dropRate: 0.1, latencyMs: 2, latencyJitterMs: 8, seed: 7 });
    await h.sync();
    await h.upstream.clearFaults();
    await h.expectConverged('ops', 'events');
    await h.expectConverged('ops', 'assets');

    await h.upstream.updateRecords('ops', 'events', eventIds.slice(0, 120).map((id, i) => ({ id, qty: -i })));
    await h.upstream.deleteRecords('ops', 'events', eventIds.slice(200, 230));
    await h.upstream.updateRecords('ops', 'assets', assetIds.slice(0, 50).map((id) => ({ id, name: 'patched' })));
    await h.upstream.deleteRecords('ops', 'assets', assetIds.slice(100, 110));
    await h.upstream.setFaults({ errorRate: 0.17, rateLimitRate: 0.03, retryAfterSeconds: 1, dropRate: 0.1, latencyMs: 2, latencyJitterMs: 8, seed: 11 });
    await h.sync();
    await h.upstream.clearFaults();
    await h.expectConverged('ops', 'events');
    await h.expectConverged('ops', 'assets');

    // The faults really happened and were retried through.
    const failed = h.requests.filter((r) => r.status === 'network' || r.status === 429 || r.status === 500);
    expect(failed.length).toBeGreaterThan(10);
    expect(h.requests.some((r) => r.status === 429)).toBe(true);
    expect(h.requests.some((r) => r.status === 'network')).toBe(true);
  });
});
