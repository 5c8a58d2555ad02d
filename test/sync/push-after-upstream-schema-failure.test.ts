import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * A cycle whose schema pull fails because upstream cannot be used (down, failing or throttling
 * once the client has retried, refusing the key) does not push: every push request would meet the
 * same, and the first batch's edits would only be charged another attempt, their next try pushed
 * further off with each cycle of an outage. A schema pull that fails for another reason (an answer
 * wsmirror refuses, the mirror) does not hold the push back (docs/sync.md).
 */
forEachDialect('push: after a schema pull upstream failed', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function editedLocally(): Promise<string> {
    h = await startSyncHarness(dialect, { lookbackMs: 0 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ada' }]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    await h.tm.sql(`UPDATE ${table} SET name = 'Ada Lovelace' WHERE id = ${Number(id)}`);
    return table;
  }

  const outbox = async () => (await h.tm.sql<{ status: string; attempts: number | string }>(
    `SELECT status, attempts FROM ${h.tm.table('_wsmirror_outbox')}`)).map((e) => ({ status: e.status, attempts: Number(e.attempts) }));

  it('upstream answering 503 to everything: the cycle fails at the schema, sends no edit, charges none an attempt', async () => {
    await editedLocally();
    h.proxy!.seen.length = 0;
    h.proxy!.rewrite = () => ({ status: 503, body: '{"error":{"message":"down for maintenance"}}' });
    await expect(h.engine.runCycle()).rejects.toThrow(/503/);
    expect(h.proxy!.seen.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(await outbox()).toEqual([{ status: 'pending', attempts: 0 }]);

    h.proxy!.rewrite = undefined;
    expect((await h.engine.runCycle()).push).toMatchObject({ pushed: 1 });
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values.name)).toEqual(['Ada Lovelace']);
  });

  it('a schema answer wsmirror refuses (upstream answers): the push still goes, and the cycle fails after it', async () => {
    await editedLocally();
    h.proxy!.rewrite = (path) => (path.includes('/schema/changes') ? '{"data":"not a list"}' : undefined);
    await expect(h.engine.runCycle()).rejects.toThrow(/schema/);
    h.proxy!.rewrite = undefined;
    expect(await outbox()).toEqual([]);
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values.name)).toEqual(['Ada Lovelace']);
  });
});
