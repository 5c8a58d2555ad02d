import { afterEach, expect, it } from 'vitest';
import { SyncEngine, SYNC_DEFAULTS } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A pull queues the rows of its pages for one mirror transaction while it fetches more. Counted in
 * rows alone (500 on SQLite, 2,000 on Postgres), a batch of large records held hundreds of MB:
 * 1,200 records of 200 KB took a first `wsmirror sync` to 391 MiB on SQLite (its heap near the
 * launcher's bound) and 649 MiB on Postgres. A batch is also written once its values reach
 * `writeBatchBytes`.
 */
forEachDialect('pull: a write transaction holds a bounded amount of data', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('writes large records in batches of about writeBatchBytes, not of writeBatchRows', async () => {
    const options = { pageSize: 10, backfillConcurrency: 1, lookbackMs: 0 };
    h = await startSyncHarness(dialect, options);
    await h.upstream.createModule('docs');
    await h.upstream.createTable('docs', 'pages', { hasHistory: true }, [field('body', 'string')]);
    const size = 200_000;
    const count = 60;
    await h.upstream.createRecords('docs', 'pages',
      Array.from({ length: count }, (_, i) => ({ body: `${String(i).padStart(4, '0')}${'x'.repeat(size - 4)}` })), 20);

    const writes: number[] = [];
    const engine = new SyncEngine({
      client: h.client, mirror: h.tm.mirror, options,
      observer: { rowsApplied: (_table, operation, rows) => { if (operation === 'upsert') writes.push(rows); } },
    });
    expect((await engine.runCycle({ forceFullScan: true })).ok).toBe(true);

    expect(writes.reduce((sum, rows) => sum + rows, 0)).toBe(count);
    // A batch goes once a page takes it to the bound: at most the bound and one page more.
    expect(Math.max(...writes) * size).toBeLessThanOrEqual(SYNC_DEFAULTS.writeBatchBytes + options.pageSize * size);
    expect(writes.length).toBeGreaterThan(1);
    await h.expectConverged('docs', 'pages');
  });
});
