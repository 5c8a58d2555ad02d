import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * What a pull records about its table: its last pull, the upstream state the table holds, and
 * its last error, cleared by the next successful pull. A pull records it with its last rows and
 * cursor, on every path (changes of a table with history, scan of one without).
 */

const FIELDS = [{ name: 'name', type: 'string' as const, labels: { '': 'Name' } }];

forEachDialect('pull: the state recorded for each table', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('a failed pull leaves its error; the next successful one clears it and records the pull', async () => {
    h = await startSyncHarness(dialect, {}, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('ops');
    await h.upstream.createTable('ops', 'events', { hasHistory: true }, FIELDS);
    await h.upstream.createTable('ops', 'assets', { hasHistory: false }, FIELDS);
    const [event] = await h.upstream.createRecords('ops', 'events', [{ name: 'e1' }]);
    await h.upstream.createRecords('ops', 'assets', [{ name: 'a1' }]);
    await h.sync();
    const stateOf = async () => {
      const { tables } = await h.tm.mirror.readSyncState();
      const catalog = await h.tm.mirror.readCatalog();
      return new Map(catalog.tables.map((t) => [t.tableName, { ...tables.find((s) => s.tableId === t.tableId)!, lastPullAt: t.lastPullAt }]));
    };
    const first = await stateOf();

    // Every read of the two tables' records fails.
    h.proxy!.rewrite = (path, _body, { method }) => (method === 'GET' && /\/tables\/(events|assets)\/records/.test(path) ? { status: 500 } : undefined);
    const failing = await h.sync({ allowFailure: true });
    expect(failing.tables.map((t) => t.action)).toEqual(['failed', 'failed']);
    const failed = await stateOf();
    for (const name of ['events', 'assets']) {
      expect(failed.get(name)!.lastError, name).toMatchObject({ code: expect.any(String) });
      expect(failed.get(name)!.lastPullAt, name).toBe(first.get(name)!.lastPullAt);
    }

    h.proxy!.rewrite = undefined;
    await h.upstream.updateRecords('ops', 'events', [{ id: event!, name: 'e2' }]);
    const again = await h.sync();
    expect(again.tables.map((t) => t.action).sort()).toEqual(['changes', 'scan']);
    const after = await stateOf();
    for (const name of ['events', 'assets']) {
      const s = after.get(name)!;
      expect(s.lastError, name).toBeNull();
      expect(Date.parse(s.lastPullAt!), name).toBeGreaterThan(Date.parse(first.get(name)!.lastPullAt!));
      expect(Date.parse(s.currentAsOf!), name).toBeGreaterThan(Date.parse(first.get(name)!.currentAsOf!));
    }
    await h.expectConverged('ops', 'events');
  });
});
