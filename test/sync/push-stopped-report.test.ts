import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A push that stops midway (upstream went down after some batches went through) reports what it
 * did before it stopped, with why it stopped: the cycle's line and JSON log count the edits that
 * went out, not none.
 */
forEachDialect('push: a push that stops midway', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('reports the edits pushed before upstream failed, and the failure', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0, pushBatchRecords: 2, pushRequestsInFlight: 1 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const ids = await h.upstream.createRecords('crm', 'people', [1, 2, 3, 4, 5, 6].map((n) => ({ name: `p${n}` })));
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    await h.tm.sql(`UPDATE ${table} SET name = name || '!'`);
    let patches = 0;
    h.proxy!.rewrite = (_path, _body, { method }) => (method === 'PATCH' && ++patches > 1 ? { status: 503, body: '{"error":{"message":"down"}}' } : undefined);
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    expect(report.ok).toBe(false);
    expect(report.push).toMatchObject({ pushed: 2, error: { message: expect.stringContaining('503') } });
    // The answered batch's edits are settled; the refused batch's are charged an attempt and back
    // off; the batch never sent waits, uncharged, for the next push.
    const left = await h.tm.sql<{ attempts: number | string }>(`SELECT attempts FROM ${h.tm.table('_wsmirror_outbox')} WHERE status = 'pending' ORDER BY attempts`);
    expect(left.map((e) => Number(e.attempts))).toEqual([0, 0, 1, 1]);
    expect(ids).toHaveLength(6);
  });
});
