import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A change committed late (DESIGN §4.3: the reason for the lookback) can show a poll a record's
 * deletion after the same poll read the record back: the later read must win, in the same cycle.
 * The emulator never commits late, so a real HTTP proxy in front of it plays the late commit: it
 * deletes the record upstream while the poll runs and shows that deletion on the poll's next page.
 */
forEachDialect('pull: a deletion committed late', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('deletes a record whose deletion a later page of the same poll shows, after an earlier page read it back', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0, pageSize: 1 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'note', type: 'string', labels: { '': 'Note' } }]);
    const [a, b] = await h.upstream.createRecords('shop', 'items', [{ note: 'a' }, { note: 'b' }]);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.upstream.updateRecords('shop', 'items', [{ id: a, note: 'a2' }]);
    await h.upstream.updateRecords('shop', 'items', [{ id: b, note: 'b2' }]);

    let lateCommits = 0;
    h.proxy!.rewrite = async (path, body) => {
      // The poll's second page (one change a page): record a was read back after the first.
      if (!path.includes('/records/changes') || !path.includes('offset=1')) return undefined;
      lateCommits += 1;
      await h.upstream.deleteRecords('shop', 'items', [a!]);
      const page = JSON.parse(body) as { data: { id: string; changeType: string; changedAt: string }[]; meta: { asOf: string } };
      page.data.push({ id: a!, changeType: 'delete', changedAt: page.meta.asOf });
      return JSON.stringify(page);
    };
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    expect(report.ok).toBe(true);
    expect(lateCommits).toBe(1);
    await h.expectConverged('shop', 'items');
  });
});
