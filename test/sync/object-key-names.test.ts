import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

/**
 * Field names that are also keys every JavaScript object has (`__proto__`, `constructor`,
 * `prototype`) are ordinary names under the API's rule: they go from the emulator through client
 * validation, the engine and the mirror to SQL like any other name, on both dialects.
 */
forEachDialect('pull: field names that are JavaScript object keys', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('mirrors __proto__, constructor and prototype fields value for value, backfill and changes', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('shop');
    const fields = [
      { name: 'constructor', type: 'string', labels: { '': 'Constructor' } },
      { name: 'prototype', type: 'number', labels: { '': 'Prototype' } },
      { name: '__proto__', type: 'string', labels: { '': 'Proto' } },
    ] as const;
    await h.upstream.createTable('shop', 'keys', { hasHistory: true }, [...fields]);
    // The same names in a table without history: full scans take the other path.
    await h.upstream.createTable('shop', 'plain', {}, [...fields]);
    await h.upstream.createRecords('shop', 'plain', JSON.parse('[{ "constructor": "k", "prototype": 7, "__proto__": "v" }, {}]'));
    // JSON.parse keeps `__proto__` as an own key, as the bodies on the wire do.
    const ids = await h.upstream.createRecords('shop', 'keys', JSON.parse(`[
      { "constructor": "c1", "prototype": 1, "__proto__": "p1" },
      { "constructor": "c2", "prototype": 2, "__proto__": null }
    ]`));
    // Positional aliases: a row object of the SQL driver would lose a `__proto__` key.
    const rows = async () => (await h.tm.sql<{ i: unknown; c: unknown; p: unknown; q: unknown }>(
      `SELECT id AS i, "constructor" AS c, "prototype" AS p, "__proto__" AS q FROM ${h.tm.table('shop__keys')} ORDER BY id`,
    )).map((r) => [Number(r.i), r.c, r.p, r.q]);
    await h.sync();
    expect(await rows()).toEqual([[Number(ids[0]), 'c1', 1, 'p1'], [Number(ids[1]), 'c2', 2, null]]);
    await h.expectConverged('shop', 'keys');
    await h.expectConverged('shop', 'plain');
    const catalog = await h.tm.sql<{ field_name: string }>(
      `SELECT field_name FROM ${h.tm.table('_wsmirror_fields')} ORDER BY table_id, position`);
    expect(catalog.map((f) => f.field_name)).toEqual(['constructor', 'prototype', '__proto__', 'constructor', 'prototype', '__proto__']);

    await h.upstream.updateRecords('shop', 'keys', JSON.parse(`[
      { "id": ${ids[0]}, "constructor": null, "__proto__": "p1b" },
      { "id": ${ids[1]}, "prototype": 20, "__proto__": "p2" }
    ]`));
    const second = await h.sync();
    expect(second.tables.map((t) => t.action)).toEqual(['changes', 'scan']);
    expect(await rows()).toEqual([[Number(ids[0]), null, 1, 'p1b'], [Number(ids[1]), 'c2', 20, 'p2']]);
    await h.expectConverged('shop', 'keys');

    // The mirror hands the values back under the same names (what the push reads).
    const table = (await h.tm.mirror.readCatalog()).tables.find((t) => t.tableName === 'keys')!;
    const [back] = await h.tm.mirror.readRows(table.tableId, [ids[1]!]);
    expect(Object.hasOwn(back!.values, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(back!.values))).toEqual(JSON.parse('{"constructor":"c2","prototype":20,"__proto__":"p2"}'));
  });
});
