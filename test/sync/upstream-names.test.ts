import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import type { Rewrite } from '../helpers/rewriting-proxy.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Module, table and field names outside the API's rule (`^[a-z0-9_]+$`, 1 to 100 characters)
 * never reach the mirror: the table is refused, named in the report every cycle, and every other
 * table goes on syncing. The emulator only hands out good names, so a proxy renames on the way.
 */
// Far past the rule's 100 characters: messages show its start and its length, not all of it.
const LONG = 'm'.repeat(5000);
const badNames: Rewrite = (path, body) => (/\/workspace\/[a-z0-9]+$/.test(path.split('?')[0]!)
  ? body
    .replaceAll('"name":"tblbad"', '"name":"Tbl Bad"')
    .replaceAll('"name":"fldbad"', '"name":"fld-bad"')
    .replaceAll('"name":"modzz"', `"name":"${LONG}"`)
  : undefined);

forEachDialect('pull: upstream names outside the rule', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  async function workspace(): Promise<string> {
    // No lookback: a cycle sees only new schema changes, so a re-read must have another reason.
    h = await startSyncHarness(dialect, { lookbackMs: 0 }, { maxRetries: 0, proxy: true });
    const qty = { name: 'qty', type: 'number', labels: { '': 'Qty' } } as const;
    await h.upstream.createModule('shop');
    await h.upstream.createModule('modzz');
    await h.upstream.createTable('shop', 'good', { hasHistory: true }, [qty]);
    await h.upstream.createTable('shop', 'tblbad', { hasHistory: true }, [qty]);
    await h.upstream.createTable('shop', 'oddfield', {}, [qty, { name: 'fldbad', type: 'string', labels: { '': 'Bad' } }]);
    await h.upstream.createTable('modzz', 'inner', {}, [qty]);
    for (const t of ['good', 'tblbad', 'oddfield']) await h.upstream.createRecords('shop', t, [{ qty: 1 }, { qty: 2 }]);
    await h.upstream.createRecords('modzz', 'inner', [{ qty: 1 }]);
    return (await h.upstream.createRecords('shop', 'good', [{ qty: 3 }]))[0]!;
  }

  function expectRefused(report: Awaited<ReturnType<SyncHarness['sync']>>): void {
    expect(report.ok).toBe(false);
    const failed = report.tables.filter((t) => t.action === 'failed');
    expect(failed.map((t) => t.error!.code)).toEqual(['INVALID_RESPONSE', 'INVALID_RESPONSE', 'INVALID_RESPONSE']);
    const messages = failed.map((t) => t.error!.message).join('\n');
    expect(messages).toContain('table name "Tbl Bad"');
    expect(messages).toContain('field name "fld-bad"');
    expect(messages).toContain(`module name "${'m'.repeat(100)}"…(5000 characters)`);
    expect(messages).not.toContain('m'.repeat(101));
    expect(failed.map((t) => t.table).join('\n')).not.toContain('m'.repeat(101));
    expect(messages).toContain('^[a-z0-9_]+$');
  }

  it('refuses tables with such names, reports them every cycle, and keeps the others syncing', async () => {
    const goodId = await workspace();
    h.proxy!.rewrite = badNames;
    expectRefused(await h.sync({ allowFailure: true }));
    const mirrored = (await h.tm.mirror.readCatalog()).tables.map((t) => `${t.moduleName}.${t.tableName}`);
    expect(mirrored).toEqual(['shop.good']);
    await h.expectConverged('shop', 'good');

    await h.upstream.updateRecords('shop', 'good', [{ id: goodId, qty: 30 }]);
    const again = await h.sync({ allowFailure: true });
    expect(again.schema.reread).toBe(true);
    expectRefused(again);
    await h.expectConverged('shop', 'good');
    expect((await h.tm.mirror.readCatalog()).tables).toHaveLength(1);
    // Visible in SQL too, beside the cursors.
    const stored = await h.tm.sql<{ value: string }>(
      `SELECT value FROM ${h.tm.table('_wsmirror_cursors')} WHERE name = 'schema:refused-tables'`);
    expect(JSON.parse(stored[0]!.value)).toHaveLength(3);
  });

  it('keeps a mirrored table whose names turn bad as it was, and resumes it once they are good again', async () => {
    await workspace();
    await h.sync();
    const before = await h.tm.sql<{ n: number }>(`SELECT count(*) AS n FROM ${h.tm.table('shop__tblbad')}`);

    // The names turn bad with a schema change (any change makes the workspace be read again).
    h.proxy!.rewrite = badNames;
    await h.upstream.patchTable('shop', 'good', { labels: { '': 'Good' } });
    await h.upstream.createRecords('shop', 'tblbad', [{ qty: 9 }]);
    await h.upstream.createRecords('shop', 'good', [{ qty: 9 }]);
    expectRefused(await h.sync({ allowFailure: true }));
    // Neither dropped nor changed: the mirror keeps what it had.
    expect((await h.tm.mirror.readCatalog()).tables).toHaveLength(4);
    expect(await h.tm.sql<{ n: number }>(`SELECT count(*) AS n FROM ${h.tm.table('shop__tblbad')}`)).toEqual(before);
    await h.expectConverged('shop', 'good');

    // Upstream answers good names again without logging a schema change: the refusal does not stick.
    h.proxy!.rewrite = undefined;
    expect((await h.sync()).ok).toBe(true);
    expect(await h.tm.sql(`SELECT value FROM ${h.tm.table('_wsmirror_cursors')} WHERE name = 'schema:refused-tables'`)).toEqual([]);
    expect((await h.sync()).schema.reread).toBe(false);
    for (const [m, t] of [['shop', 'good'], ['shop', 'tblbad'], ['shop', 'oddfield'], ['modzz', 'inner']] as const) {
      await h.expectConverged(m, t);
    }
  });
  it('a table wider than the mirror\'s database holds is refused with a message naming it; the others sync', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'good', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    // 1,000 choice fields: a readable view of 2,002 columns, over both dialects' limit.
    await h.upstream.createTable('shop', 'wide', {}, Array.from({ length: 1000 }, (_, i) => ({
      name: `c${i}`, type: 'choice', labels: { '': `C${i}` }, options: [{ name: 'x' }],
    })));
    await h.upstream.createRecords('shop', 'good', [{ qty: 1 }]);
    const report = await h.engine.runCycle({ forceFullScan: true });
    expect(report.tables.find((t) => t.table === 'shop.wide')).toMatchObject({
      action: 'failed', error: { code: 'MIRROR_LIMIT', message: expect.stringMatching(/table shop\.wide has a readable view of 2002 columns.*not mirrored/) },
    });
    await h.expectConverged('shop', 'good');
    expect((await h.tm.mirror.readCatalog()).tables.map((t) => t.tableName)).toEqual(['good']);
    // Upstream keeps changing: the other tables follow.
    await h.upstream.createRecords('shop', 'good', [{ qty: 2 }]);
    await h.engine.runCycle();
    await h.expectConverged('shop', 'good');
  });
});
