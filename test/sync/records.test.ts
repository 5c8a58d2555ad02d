import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const FIELDS = [
  { name: 'name', type: 'string' as const, labels: { '': 'Name' } },
  { name: 'qty', type: 'number' as const, labels: { '': 'Quantity' } },
];

const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ name: `item ${from + i}`, qty: from + i }));

forEachDialect('pull: records', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('follows inserts, updates and deletes of a table with history', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, FIELDS);
    const ids = await h.upstream.createRecords('shop', 'items', rows(250));
    const first = await h.sync();
    expect(first.tables[0]).toMatchObject({ action: 'backfill' });
    // The catch-up poll after the scan re-reads rows written inside the lookback window.
    expect(first.tables[0]!.upserted).toBeGreaterThanOrEqual(250);
    await h.expectConverged('shop', 'items');

    await h.upstream.updateRecords('shop', 'items', [{ id: ids[3], qty: 1000, name: null }, { id: ids[200], qty: -1 }]);
    await h.upstream.deleteRecords('shop', 'items', [ids[0]!, ids[249]!]);
    await h.upstream.createRecords('shop', 'items', rows(5, 1000));
    const second = await h.sync();
    expect(second.tables[0]).toMatchObject({ action: 'changes' });
    await h.expectConverged('shop', 'items');
  });

  it('scans and diffs a table without history, deleting only what a look-up confirms gone', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'plain', { hasHistory: false }, FIELDS);
    const ids = await h.upstream.createRecords('shop', 'plain', rows(320));
    await h.sync();
    await h.expectConverged('shop', 'plain');

    await h.upstream.updateRecords('shop', 'plain', [{ id: ids[10], name: 'renamed' }]);
    await h.upstream.deleteRecords('shop', 'plain', [ids[0]!, ids[150]!, ids[319]!]);
    await h.upstream.createRecords('shop', 'plain', rows(3, 500));
    const report = await h.sync();
    expect(report.tables[0]).toMatchObject({ action: 'scan', deleted: 3 });
    await h.expectConverged('shop', 'plain');
  });

  it('the comparison itself notices a row that differs', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, FIELDS);
    await h.upstream.createRecords('shop', 'items', rows(3));
    await h.sync();
    const entry = await catalogEntry(h.tm, 'shop', 'items');
    await h.tm.sql(`UPDATE ${h.tm.table(entry!.sqlName)} SET "qty" = 99 WHERE id = (SELECT min(id) FROM ${h.tm.table(entry!.sqlName)})`);
    await expect(h.expectConverged('shop', 'items')).rejects.toThrow();
  });

  it('switches between changes and full scans when history is turned on or off', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: false }, FIELDS);
    const ids = await h.upstream.createRecords('shop', 'items', rows(120));
    await h.sync();

    // While history is off, a row is deleted; turning history on must still catch it.
    await h.upstream.deleteRecords('shop', 'items', [ids[5]!]);
    await h.upstream.patchTable('shop', 'items', { hasHistory: true });
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[6], qty: 7777 }]);
    const on = await h.sync();
    expect(on.tables[0]).toMatchObject({ mode: 'history' });
    await h.expectConverged('shop', 'items');

    await h.upstream.updateRecords('shop', 'items', [{ id: ids[7], qty: 8888 }]);
    expect((await h.sync()).tables[0]).toMatchObject({ action: 'changes' });
    await h.expectConverged('shop', 'items');

    await h.upstream.patchTable('shop', 'items', { hasHistory: false });
    await h.upstream.deleteRecords('shop', 'items', [ids[8]!]);
    const off = await h.sync();
    expect(off.tables[0]).toMatchObject({ mode: 'fullscan', action: 'scan' });
    await h.expectConverged('shop', 'items');
  });

  it('stops a scan that would delete more than the allowed share, deleting nothing', async () => {
    h = await startSyncHarness(dialect, { maxDeleteShare: 0.5, deleteShareFloor: 10 });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'plain', { hasHistory: false }, FIELDS);
    const ids = await h.upstream.createRecords('shop', 'plain', rows(100));
    await h.sync();
    await h.upstream.deleteRecords('shop', 'plain', ids.slice(0, 60));
    const report = await h.sync({ allowFailure: true });
    expect(report.ok).toBe(false);
    expect(report.tables[0]).toMatchObject({ action: 'failed', error: { code: 'SAFETY_VALVE' } });
    const entry = await catalogEntry(h.tm, 'shop', 'plain');
    const [count] = await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table(entry!.sqlName)}`);
    expect(Number(count!.n)).toBe(100);
  });

  it('an idle cycle costs one schema request plus one request per history table', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('shop');
    for (let i = 0; i < 5; i++) {
      await h.upstream.createTable('shop', `t${i}`, { hasHistory: i % 2 === 0 }, FIELDS);
      await h.upstream.createRecords('shop', `t${i}`, rows(3));
    }
    await h.sync();
    h.requests.length = 0;
    // Tables without history are scanned when due; the default period has not passed.
    const report = await h.engine.runCycle();
    expect(report.ok).toBe(true);
    const byEndpoint = h.requests.map((r) => r.endpoint).sort();
    expect(byEndpoint).toEqual(['listRecordChanges', 'listRecordChanges', 'listRecordChanges', 'listSchemaChanges']);
  });
});
