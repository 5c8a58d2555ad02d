import { afterEach, expect, it } from 'vitest';
import { MirrorError } from '../../src/mirror/errors.ts';
import type { Mirror } from '../../src/mirror/index.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * The mirror refusing a write (disk full, a lock held too long) while a backfill waits for its
 * next page fails that table's pull, reported and retried next cycle: it must not end the process
 * (a write left in flight with nobody awaiting it yet was an unhandled rejection).
 */
forEachDialect('pull: a mirror write that fails mid-backfill', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('fails the table with the mirror error, and the next cycle completes the backfill', async () => {
    h = await startSyncHarness(dialect, { pageSize: 50, writeBatchRows: 100, backfillConcurrency: 1, lookbackMs: 0 });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [field('qty', 'number')]);
    await h.upstream.createRecords('shop', 'items', Array.from({ length: 400 }, (_, i) => ({ qty: i })));
    // Pages come slowly, so the refused write fails while the scan waits for the next one.
    await h.upstream.setFaults({ latencyMs: 150 });

    let refusals = 1;
    const failing = new Proxy(h.tm.mirror, {
      get(target, key, receiver) {
        if (key === 'applyRows') {
          return async (...args: Parameters<Mirror['applyRows']>) => {
            if (args[1].encoded !== undefined && refusals-- > 0) throw new MirrorError('database or disk is full (injected)');
            return target.applyRows(...args);
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const engine = new SyncEngine({ client: h.client, mirror: failing, options: { pageSize: 50, writeBatchRows: 100, backfillConcurrency: 1, lookbackMs: 0 } });
    const failed = await engine.runCycle();
    expect(failed.tables).toEqual([expect.objectContaining({
      table: 'shop.items', action: 'failed', error: expect.objectContaining({ code: 'MIRROR', message: expect.stringContaining('disk is full') }),
    })]);

    await h.upstream.setFaults({});
    expect((await engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
  });
});
