import { afterEach, expect, it } from 'vitest';
import { createCycleObserver } from '../../src/daemon/cycle-observer.ts';
import { Metrics } from '../../src/daemon/metrics.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import type { Rewrite } from '../helpers/rewriting-proxy.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const label = (text: string) => ({ '': text });

/**
 * Upstream's schema changing while a table's records are read: pages read before the change
 * and after it disagree with the field list the pull checks records against. A real HTTP proxy
 * in front of the emulator changes upstream (through the emulator's own API) just before it
 * hands a chosen answer to the client, so the next requests meet the new schema.
 */
forEachDialect('pull: the schema changes during a table\'s pull', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  /** A table without history, `shop.items`, with 60 records in pages of 10, mirrored. */
  async function mirroredScan(): Promise<void> {
    h = await startSyncHarness(dialect, { pageSize: 10, backfillConcurrency: 1 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', {}, [
      { name: 'qty', type: 'number', labels: label('Qty') },
      { name: 'note', type: 'string', labels: label('Note') },
    ]);
    await h.upstream.createRecords('shop', 'items', Array.from({ length: 60 }, (_, i) => ({ qty: i, note: `n${i}` })));
    await h.sync();
  }

  /** Runs `change` upstream once per time the first page of the table's scan is answered, `times` times. */
  function onFirstPage(change: () => Promise<unknown>, times = 1): Rewrite {
    let left = times;
    return async (path) => {
      if (left === 0 || !path.includes('/tables/items/records?') || !/[?&]offset=0\b/.test(path) || path.includes('filter=')) return undefined;
      left -= 1;
      await change();
      return undefined;
    };
  }

  /** The cycle ended well with the table pulled, and recorded no error for it. */
  async function expectPulled(report: Awaited<ReturnType<SyncHarness['engine']['runCycle']>>, action = 'scan'): Promise<void> {
    expect(report.tables).toMatchObject([{ table: 'shop.items', action }]);
    expect(report.ok).toBe(true);
    const state = (await h.tm.mirror.readSyncState()).tables;
    expect(state.map((t) => t.lastError)).toEqual([null]);
  }

  it('a field deleted between two pages: the column is dropped and the table read again in the same cycle, with no error', async () => {
    await mirroredScan();
    h.proxy!.rewrite = onFirstPage(() => h.upstream.deleteField('shop', 'items', 'note'));
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    await expectPulled(report);
    expect(report.schema.operations).toEqual([expect.stringMatching(/^drop column .*note/)]);
    expect((await catalogEntry(h.tm, 'shop', 'items'))!.fields.map((f) => f.name)).toEqual(['qty']);
    await h.expectConverged('shop', 'items');
  });

  it('a field renamed between two pages: the column is renamed in place, keeping its values, in the same cycle', async () => {
    await mirroredScan();
    h.proxy!.rewrite = onFirstPage(async () => {
      await h.upstream.patchField('shop', 'items', 'note', { name: 'memo' });
      const [first] = await h.upstream.allRecords('shop', 'items');
      await h.upstream.updateRecords('shop', 'items', [{ id: first!.id, memo: 'renamed' }]);
    });
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    await expectPulled(report);
    expect((await catalogEntry(h.tm, 'shop', 'items'))!.fields.map((f) => f.name)).toEqual(['qty', 'memo']);
    await h.expectConverged('shop', 'items');
  });

  it('a field retyped between two pages (deleted and made again under its name): values the old column cannot hold fail nothing', async () => {
    await mirroredScan();
    h.proxy!.rewrite = onFirstPage(async () => {
      await h.upstream.deleteField('shop', 'items', 'qty');
      await h.upstream.addFields('shop', 'items', [{ name: 'qty', type: 'string', labels: label('Qty') }]);
      const all = await h.upstream.allRecords('shop', 'items');
      await h.upstream.updateRecords('shop', 'items', all.map((r) => ({ id: r.id, qty: `about ${r.values['note']}` })));
    });
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    await expectPulled(report);
    await h.expectConverged('shop', 'items');
  });

  it('a table deleted between two pages is dropped in the same cycle, with no error', async () => {
    await mirroredScan();
    h.proxy!.rewrite = onFirstPage(() => h.upstream.deleteTable('shop', 'items'));
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    expect(report.ok).toBe(true);
    expect(report.tables).toEqual([]);
    expect(await catalogEntry(h.tm, 'shop', 'items')).toBeUndefined();
  });

  it('a schema that changes again while the table is read the second time: the table waits for the next cycle, with no error, and its rows are kept', async () => {
    await mirroredScan();
    const count = async () => (await h.tm.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${h.tm.table('shop__items')}`)).map((r) => Number(r.n));
    const before = await count();
    let n = 0;
    h.proxy!.rewrite = onFirstPage(() => h.upstream.addFields('shop', 'items', [{ name: `x${++n}`, type: 'string', labels: label('X') }]), 2);
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    expect(n).toBe(2);
    await expectPulled(report, 'deferred');
    expect(await count()).toEqual(before);
    await h.sync();
    await h.expectConverged('shop', 'items');
  });

  it('a record missing a field upstream still has fails the table as before, once the table read again shows no change', async () => {
    await mirroredScan();
    const before = await h.tm.sql<{ note: string | null }>(`SELECT note FROM ${h.tm.table('shop__items')} ORDER BY id`);
    await h.upstream.updateRecords('shop', 'items', [{ id: '1', note: 'changed' }]);
    // The scan's pages lose `note` on their way; the table itself is answered as it is.
    h.proxy!.rewrite = (path, body) => (path.includes('/tables/items/records?') ? body.replace(/,"note":(null|"[^"]*")/g, '') : undefined);
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    expect(report.ok).toBe(false);
    expect(report.tables).toMatchObject([{ table: 'shop.items', action: 'failed', error: { code: 'INVALID_RESPONSE' } }]);
    expect(report.tables[0]!.error!.message).toMatch(/record \d+ has no value for field "note"/);
    expect(h.proxy!.seen.filter((r) => /\/tables\/items$/.test(r.path))).toHaveLength(1);
    expect((await h.tm.mirror.readSyncState()).tables[0]!.lastError).toMatchObject({ code: 'INVALID_RESPONSE' });
    expect(await h.tm.sql<{ note: string | null }>(`SELECT note FROM ${h.tm.table('shop__items')} ORDER BY id`)).toEqual(before);
  });

  it('a key that upstream does not list as a field of the table is left out, as before, at the cost of one read of the table', async () => {
    await mirroredScan();
    await h.upstream.updateRecords('shop', 'items', [{ id: '1', note: 'changed' }]);
    h.proxy!.rewrite = (path, body) => (path.includes('/tables/items/records?') ? body.replace(/"values":\{/g, '"values":{"ghost":1,') : undefined);
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    await expectPulled(report);
    expect(h.proxy!.seen.filter((r) => /\/tables\/items$/.test(r.path))).toHaveLength(1);
    await h.expectConverged('shop', 'items');
  });

  it('a field added and set after the schema pull is not lost when the poll reads the change before the mirror has its column', async () => {
    // No lookback: the next poll starts where this one ended, so a change read once is not read again.
    h = await startSyncHarness(dialect, { lookbackMs: 0 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [{ name: 'qty', type: 'number', labels: label('Qty') }]);
    const [id] = await h.upstream.createRecords('shop', 'items', [{ qty: 1 }, { qty: 2 }]);
    await h.sync();
    let changed = false;
    // Once the cycle's schema poll is answered (nothing changed yet), a field is added and set.
    h.proxy!.rewrite = async (path) => {
      if (changed || !path.includes('/schema/changes')) return undefined;
      changed = true;
      await h.upstream.addFields('shop', 'items', [{ name: 'x1', type: 'string', labels: label('X1') }]);
      await h.upstream.updateRecords('shop', 'items', [{ id, x1: 'set after the schema pull' }]);
      return undefined;
    };
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    expect(changed).toBe(true);
    await expectPulled(report, 'changes');
    await h.expectConverged('shop', 'items');
  });
  /**
   * A history table `shop.items` (fields a and b), mirrored with no lookback (a change read once is
   * not read again), and `change` made upstream once the next cycle's schema poll is answered:
   * after the schema pull, before the table's pull, with the table's field names as they were.
   */
  async function changedAfterSchemaPoll(hasHistory: boolean, change: (ids: string[]) => Promise<unknown>): Promise<void> {
    h = await startSyncHarness(dialect, { lookbackMs: 0 }, { maxRetries: 0, proxy: true });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory }, [
      { name: 'a', type: 'string', labels: label('A') },
      { name: 'b', type: 'string', labels: label('B') },
    ]);
    const ids = await h.upstream.createRecords('shop', 'items', [{ a: 'a1', b: 'b1' }, { a: 'a2', b: 'b2' }]);
    await h.sync();
    let changed = false;
    h.proxy!.rewrite = async (path) => {
      if (changed || !path.includes('/schema/changes')) return undefined;
      changed = true;
      await change(ids);
      return undefined;
    };
  }

  it('a field deleted and made again under its name and type, and a value set, after the schema pull: the value is not lost', async () => {
    await changedAfterSchemaPoll(true, async ([id]) => {
      await h.upstream.deleteField('shop', 'items', 'b');
      await h.upstream.addFields('shop', 'items', [{ name: 'b', type: 'string', labels: label('B') }]);
      await h.upstream.updateRecords('shop', 'items', [{ id, b: 'NEW' }]);
    });
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    await expectPulled(report, 'changes');
    await h.expectConverged('shop', 'items');
    await h.engine.runCycle();
    await h.expectConverged('shop', 'items');
  });

  /** Swaps the names of fields a and b upstream. */
  const swapNames = async () => {
    await h.upstream.patchField('shop', 'items', 'a', { name: 'tmp' });
    await h.upstream.patchField('shop', 'items', 'b', { name: 'a' });
    await h.upstream.patchField('shop', 'items', 'tmp', { name: 'b' });
  };

  /** Swaps the names of fields a and b upstream, and sets a value of one record. */
  const swap = async ([id]: string[]) => {
    await swapNames();
    await h.upstream.updateRecords('shop', 'items', [{ id, a: 'set after the swap' }]);
  };

  it('two fields swapping names after the schema pull: the values of the table pulled meanwhile end in their own columns', async () => {
    await changedAfterSchemaPoll(true, swap);
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    await expectPulled(report, 'changes');
    await h.expectConverged('shop', 'items');
    await h.engine.runCycle();
    await h.expectConverged('shop', 'items');
  });

  it('two fields swapping names before a full scan: the scanned values end in their own columns, without waiting for the next scan', async () => {
    await changedAfterSchemaPoll(false, swap);
    const report = await h.engine.runCycle({ forceFullScan: true });
    h.proxy!.rewrite = undefined;
    await expectPulled(report, 'scan');
    await h.expectConverged('shop', 'items');
    // The next scan is not due: what this cycle wrote stays.
    expect((await h.engine.runCycle()).tables).toMatchObject([{ action: 'skipped' }]);
    await h.expectConverged('shop', 'items');
  });

  it('a table deferred after its pulls were undone is current as of its pull before, in the mirror and in the metrics', async () => {
    // The history table, mirrored with no lookback; the changes come below, at other moments.
    await changedAfterSchemaPoll(true, async () => undefined);
    h.proxy!.rewrite = undefined;
    const [id] = (await h.upstream.allRecords('shop', 'items')).map((r) => r.id);
    // Postgres answers a Date, SQLite the text stored.
    const iso = (value: unknown) => (value instanceof Date ? value : new Date(String(value))).toISOString();
    const pullState = async () => (await h.tm.sql<{ current_as_of: unknown; last_pull_at: unknown; state: string }>(
      `SELECT current_as_of, last_pull_at, state FROM ${h.tm.table('_wsmirror_tables')}`,
    )).map((r) => ({ currentAsOf: iso(r.current_as_of), lastPullAt: iso(r.last_pull_at), state: r.state }));
    const before = await pullState();
    expect(before).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await h.upstream.updateRecords('shop', 'items', [{ id, a: 'changed' }]);
    // Each of the two pulls of the cycle reads its changes, then the names of a and b swap: each
    // pull writes the record and the schema check after it undoes the pull.
    let swaps = 0;
    h.proxy!.rewrite = async (path) => {
      if (swaps === 2 || !path.includes('/tables/items/records/changes')) return undefined;
      swaps += 1;
      await swapNames();
      return undefined;
    };
    const NOW = Date.now() + 3_600_000;
    const metrics = new Metrics({ processMetrics: false, now: () => NOW });
    const engine = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0 }, observer: createCycleObserver({ metrics }) });
    const report = await engine.runCycle();
    h.proxy!.rewrite = undefined;
    expect(swaps).toBe(2);
    await expectPulled(report, 'deferred');
    expect(await pullState()).toEqual(before);
    const lag = metrics.maxLag({ maxLagMs: 60_000, fullScanEveryMs: 60_000 });
    expect(lag && new Date(Math.round(NOW - lag.seconds * 1000)).toISOString()).toBe(before[0]!.currentAsOf);

    expect((await engine.runCycle()).tables).toMatchObject([{ action: 'changes' }]);
    await h.expectConverged('shop', 'items');
    expect((await pullState())[0]!.currentAsOf > before[0]!.currentAsOf).toBe(true);
  });

  it('an undone pull goes back in one transaction: a mirror that fails the write after it leaves no pull half undone', async () => {
    await changedAfterSchemaPoll(true, async () => undefined);
    h.proxy!.rewrite = undefined;
    const [id] = (await h.upstream.allRecords('shop', 'items')).map((r) => r.id);
    const iso = (value: unknown) => (value instanceof Date ? value : new Date(String(value))).toISOString();
    const pullState = async () => (await h.tm.sql<{ last_pull_at: unknown; state: string }>(
      `SELECT last_pull_at, state FROM ${h.tm.table('_wsmirror_tables')}`,
    )).map((r) => ({ lastPullAt: iso(r.last_pull_at), state: r.state }));
    const before = await pullState();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await h.upstream.updateRecords('shop', 'items', [{ id, a: 'changed' }]);
    let swapped = false;
    h.proxy!.rewrite = async (path) => {
      if (swapped || !path.includes('/tables/items/records/changes')) return undefined;
      swapped = true;
      await swapNames();
      return undefined;
    };
    // The connection to the mirror is lost once the undo's first write is done: every write after it fails.
    const mirror = h.tm.mirror;
    let undoing = false;
    const failing = new Proxy(mirror, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value !== 'function') return value;
        if (key === 'applyRows') {
          return async (...args: Parameters<typeof mirror.applyRows>) => {
            if (undoing) throw new Error('connection to the mirror lost');
            const result = await mirror.applyRows(...args);
            if (args[1].upserts === undefined && args[1].encoded === undefined && args[1].state !== undefined) undoing = true;
            return result;
          };
        }
        if (key === 'setTableState') {
          return async (...args: Parameters<typeof mirror.setTableState>) => {
            if (undoing) throw new Error('connection to the mirror lost');
            return mirror.setTableState(...args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    await new SyncEngine({ client: h.client, mirror: failing, options: { lookbackMs: 0 } }).runCycle().catch(() => undefined);
    h.proxy!.rewrite = undefined;
    expect(swapped).toBe(true);
    expect(undoing).toBe(true);
    // Its cursors went back with its last pull: a scan or poll of it is due as it was before the cycle.
    expect(await pullState()).toEqual(before);
    expect((await h.engine.runCycle()).tables).toMatchObject([{ action: 'changes' }]);
    await h.expectConverged('shop', 'items');
  });

  it('history turned off upstream after the schema pull: the table is scanned instead, with no error', async () => {
    await changedAfterSchemaPoll(true, async ([id]) => {
      await h.upstream.patchTable('shop', 'items', { hasHistory: false });
      await h.upstream.updateRecords('shop', 'items', [{ id, a: 'set without history' }]);
    });
    const report = await h.engine.runCycle();
    h.proxy!.rewrite = undefined;
    await expectPulled(report, 'scan');
    await h.expectConverged('shop', 'items');
  });
});
