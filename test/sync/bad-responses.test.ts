import { afterEach, expect, it } from 'vitest';
import { SCHEMA_CURSOR_KEY, recordCursorKey } from '../../src/mirror/catalog.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { Rewrite } from '../helpers/rewriting-proxy.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * DESIGN §4.10: an upstream answer that cannot be trusted fails the poll without moving its
 * cursor. A real HTTP proxy in front of the emulator corrupts chosen answers.
 */
forEachDialect('pull: bad upstream answers', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  /** A history table `shop.items` with two records, mirrored; the key of its record cursor. */
  async function mirroredItems(): Promise<{ ids: string[]; cursorKey: string }> {
    h = await startSyncHarness(dialect, {}, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [
      { name: 'qty', type: 'number', labels: { '': 'Qty' } },
      { name: 'note', type: 'string', labels: { '': 'Note' } },
    ]);
    const ids = await h.upstream.createRecords('shop', 'items', [{ qty: 1, note: 'a' }, { qty: 2, note: 'b' }]);
    expect((await h.engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    const catalog = await h.tm.mirror.readCatalog();
    const cursorKey = recordCursorKey(catalog.tables[0]!.tableId);
    expect(await h.tm.mirror.getCursor(cursorKey)).toBeDefined();
    return { ids, cursorKey };
  }

  /** Runs a cycle with `rewrite` on: the table fails with `code` and its cursor stays. */
  async function expectTableFails(rewrite: Rewrite, cursorKey: string, code: string): Promise<string> {
    const before = await h.tm.mirror.getCursor(cursorKey);
    h.proxy!.rewrite = rewrite;
    try {
      const report = await h.engine.runCycle();
      expect(report.ok).toBe(false);
      expect(report.tables[0]).toMatchObject({ table: 'shop.items', action: 'failed', error: { code } });
      expect(await h.tm.mirror.getCursor(cursorKey)).toBe(before);
      return report.tables[0]!.error!.message;
    } finally {
      h.proxy!.rewrite = undefined;
    }
  }

  it('fails the table without moving its cursor, then converges once upstream answers well', async () => {
    const { ids, cursorKey } = await mirroredItems();
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);
    await expectTableFails((path) => (path.includes('/records/changes') ? '{"data": [' : undefined), cursorKey, 'INVALID_RESPONSE');
    await expectTableFails(
      (path, body) => (path.includes('/records?') ? body.replace(/"id":"(\d+)"/g, '"id":$1') : undefined),
      cursorKey, 'INVALID_RESPONSE',
    );
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
  });

  const asOfIs = (value: string, where: string): Rewrite => (path, body) =>
    (path.includes(where) ? body.replace(/"asOf":"[^"]*"/, `"asOf":"${value}"`) : undefined);

  it('refuses a meta.asOf in the future or before the since it answers, keeping the cursor', async () => {
    const { ids, cursorKey } = await mirroredItems();
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);
    const future = await expectTableFails(asOfIs('2999-01-01T00:00:00.000Z', '/records/changes'), cursorKey, 'INVALID_RESPONSE');
    expect(future).toMatch(/tables\/items\/records\/changes.*meta\.asOf 2999-01-01T00:00:00\.000Z is later than .*20\d\d-\d\d-\d\dT/);
    const since = (await h.tm.mirror.getCursor(cursorKey))!;
    const past = await expectTableFails(asOfIs('2001-01-01T00:00:00.000Z', '/records/changes'), cursorKey, 'INVALID_RESPONSE');
    expect(past).toContain(`meta.asOf 2001-01-01T00:00:00.000Z is earlier than the since sent (${since})`);

    const schemaBefore = await h.tm.mirror.getCursor(SCHEMA_CURSOR_KEY);
    h.proxy!.rewrite = asOfIs('2999-01-01T00:00:00.000Z', '/schema/changes');
    await expect(h.engine.runCycle()).rejects.toMatchObject({ code: 'INVALID_RESPONSE', message: expect.stringContaining('2999') });
    h.proxy!.rewrite = undefined;
    expect(await h.tm.mirror.getCursor(SCHEMA_CURSOR_KEY)).toBe(schemaBefore);

    // A new table's backfill takes its cursor from a probe: a bogus asOf there stores nothing.
    await h.upstream.createTable('shop', 'later', { hasHistory: true }, [{ name: 'n', type: 'number', labels: { '': 'N' } }]);
    await h.upstream.createRecords('shop', 'later', [{ n: 1 }]);
    h.proxy!.rewrite = asOfIs('2999-01-01T00:00:00.000Z', '/tables/later/records/changes');
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    expect(report.tables.find((t) => t.table === 'shop.later')).toMatchObject({ action: 'failed', error: { code: 'INVALID_RESPONSE' } });
    const later = (await h.tm.mirror.readCatalog()).tables.find((t) => t.tableName === 'later')!;
    expect(await h.tm.mirror.getCursor(`${recordCursorKey(later.tableId).replace(/records$/, '')}backfill-since`)).toBeUndefined();

    await h.upstream.updateRecords('shop', 'items', [{ id: ids[1], qty: 200 }]);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
    await h.expectConverged('shop', 'later');
  });

  it('refuses an answer whose meta.asOf jumped ahead of the feed, also replayed, and never takes it once the old clock answers again', async () => {
    const { ids, cursorKey } = await mirroredItems();
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);
    // Within five minutes of this machine's clock, but minutes after the feed's last answer.
    const rogue = asOfIs(new Date(Date.now() + 3 * 60_000).toISOString(), '/records/changes');
    expect(await expectTableFails(rogue, cursorKey, 'INVALID_RESPONSE')).toMatch(/jumped ahead.*the cursor stays/);
    // The same answer again is no clock that runs on.
    expect(await expectTableFails(rogue, cursorKey, 'INVALID_RESPONSE')).toMatch(/jumped ahead/);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
    // The old clock answered since: the rogue time is a jump again, not the confirmation of one.
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[1], qty: 200 }]);
    expect(await expectTableFails(rogue, cursorKey, 'INVALID_RESPONSE')).toMatch(/jumped ahead/);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
  });

  it('fails a pull whose records lack a mirrored field (missing is not null), keeping cursor and rows', async () => {
    const { ids, cursorKey } = await mirroredItems();
    await h.upstream.createTable('shop', 'plain', {}, [{ name: 'note', type: 'string', labels: { '': 'Note' } }]);
    const [plainId] = await h.upstream.createRecords('shop', 'plain', [{ note: 'x' }]);
    await h.sync();
    const notes = async (table: string) =>
      (await h.tm.sql<{ note: string | null }>(`SELECT note FROM ${h.tm.table(`shop__${table}`)} ORDER BY id`)).map((r) => r.note);

    await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);
    await h.upstream.updateRecords('shop', 'plain', [{ id: plainId, note: 'y' }]);
    const dropNote: Rewrite = (path, body) => (path.includes('/records?') ? body.replace(/,?"note":(null|"[^"]*")/g, '') : undefined);
    h.proxy!.rewrite = dropNote;
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    // Incremental (read back by id) and full scan alike.
    for (const table of ['shop.items', 'shop.plain']) {
      const failed = report.tables.find((t) => t.table === table)!;
      expect(failed).toMatchObject({ action: 'failed', error: { code: 'INVALID_RESPONSE' } });
      expect(failed.error!.message).toMatch(/record \d+ has no value for field "note"/);
    }
    expect(await notes('items')).toEqual(['a', 'b']);
    expect(await notes('plain')).toEqual(['x']);
    expect(await h.tm.mirror.getCursor(cursorKey)).toBeDefined();

    expect((await h.engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    await h.expectConverged('shop', 'items');
    await h.expectConverged('shop', 'plain');
  });
  it('a backfill page with a value its field cannot hold fails the table, and the rows of that page are read again once upstream answers well', async () => {
    // No lookback: the catch-up after the backfill reads no change made before it, so a row the
    // backfill skipped stays missing.
    h = await startSyncHarness(dialect, { pageSize: 50, writeBatchRows: 500, backfillConcurrency: 1, lookbackMs: 0 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
    await h.upstream.createRecords('shop', 'items', Array.from({ length: 300 }, (_, i) => ({ qty: i })));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The third page holds, in its tenth record, a number that is none.
    h.proxy!.rewrite = (path, body) => {
      if (!path.includes('/records?') || !/offset=100\b/.test(path)) return undefined;
      let n = 0;
      return body.replace(/"qty":(\d+)/g, (all) => (++n === 10 ? '"qty":"abc"' : all));
    };
    const failed = await h.engine.runCycle({ forceFullScan: true });
    expect(failed.tables[0]).toMatchObject({ action: 'failed' });
    h.proxy!.rewrite = undefined;
    expect((await h.engine.runCycle({ forceFullScan: true })).ok).toBe(true);
    await h.expectConverged('shop', 'items');
  });
  /** Rewrites the workspace answer (GET …/workspace/{id}) through `edit`, other answers pass. */
  const workspaceAnswer = (edit: (workspace: { modules: { tables: { name: string; fields: { name: string }[] }[] }[] }) => void): Rewrite =>
    (path, body) => {
      if (!/\/workspace\/[^/?]+(\?|$)/.test(path)) return undefined;
      const answer = JSON.parse(body);
      edit(answer.data);
      return JSON.stringify(answer);
    };

  it('a workspace answer that leaves out a table or field upstream still serves drops nothing: the table is held and reported, the others sync', async () => {
    const { ids } = await mirroredItems();
    const rowsOfItems = async () => h.tm.mirror.countRows((await h.tm.mirror.readCatalog()).tables.find((t) => t.tableName === 'items')!.tableId);
    // A schema change, so the next cycle reads the workspace again.
    await h.upstream.createTable('shop', 'other', { hasHistory: true }, [{ name: 'n', type: 'number', labels: { '': 'N' } }]);
    await h.upstream.createRecords('shop', 'other', [{ n: 7 }]);
    await h.upstream.updateRecords('shop', 'items', [{ id: ids[0], qty: 100 }]);

    h.proxy!.rewrite = workspaceAnswer((w) => {
      for (const m of w.modules) m.tables = m.tables.filter((t) => t.name !== 'items');
    });
    const withoutTable = await h.engine.runCycle();
    expect(withoutTable.ok).toBe(false);
    expect(withoutTable.tables.find((t) => t.table === 'shop.items')).toMatchObject({
      action: 'failed', error: { code: 'SAFETY_VALVE', message: expect.stringMatching(/leaves out table shop\.items.*still serves it.*nothing was dropped/) },
    });
    expect(await rowsOfItems()).toBe(2);
    await h.expectConverged('shop', 'other');

    h.proxy!.rewrite = workspaceAnswer((w) => {
      for (const m of w.modules) for (const t of m.tables) if (t.name === 'items') t.fields = t.fields.filter((f) => f.name !== 'note');
    });
    const withoutField = await h.engine.runCycle();
    expect(withoutField.tables.find((t) => t.table === 'shop.items')).toMatchObject({
      action: 'failed', error: { code: 'SAFETY_VALVE', message: expect.stringMatching(/leaves out field note of table shop\.items/) },
    });
    expect((await h.tm.mirror.readCatalog()).fields.map((f) => f.fieldName)).toContain('note');

    h.proxy!.rewrite = undefined;
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('shop', 'items');
    expect(await rowsOfItems()).toBe(2);

    // Upstream's own deletes still go through.
    await h.upstream.deleteField('shop', 'items', 'note');
    await h.upstream.deleteTable('shop', 'other');
    expect((await h.engine.runCycle()).ok).toBe(true);
    const catalog = await h.tm.mirror.readCatalog();
    expect(catalog.tables.map((t) => t.tableName)).toEqual(['items']);
    expect(catalog.fields.map((f) => f.fieldName)).not.toContain('note');
  });
});
