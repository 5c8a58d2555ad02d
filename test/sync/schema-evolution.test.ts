import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const label = (text: string) => ({ '': text });

async function relationNames(h: SyncHarness): Promise<string[]> {
  const rows =
    h.tm.dialect === 'postgres'
      ? await h.tm.sql<{ name: string }>(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name NOT LIKE '\\_wsmirror\\_%'`,
          [h.tm.pgSchema],
        )
      : await h.tm.sql<{ name: string }>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_wsmirror\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite_%'`,
        );
  return rows.map((r) => r.name).sort();
}

forEachDialect('pull: schema changes', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('adds, renames in place, drops and retypes columns', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [
      { name: 'name', type: 'string', labels: label('Name') },
      { name: 'age', type: 'number', labels: label('Age') },
      { name: 'note', type: 'string', labels: label('Note') },
    ]);
    await h.upstream.createRecords('crm', 'people', [{ name: 'Ada', age: 36, note: 'x' }, { name: 'Alan', age: 41 }]);
    await h.sync();
    const before = await catalogEntry(h.tm, 'crm', 'people');

    await h.upstream.addFields('crm', 'people', [{ name: 'email', type: 'string', labels: label('E-mail') }]);
    await h.upstream.patchField('crm', 'people', 'name', { name: 'full_name' });
    await h.upstream.deleteField('crm', 'people', 'note');
    // A type change upstream: the field is deleted and created again with another type.
    await h.upstream.deleteField('crm', 'people', 'age');
    await h.upstream.addFields('crm', 'people', [{ name: 'age', type: 'string', labels: label('Age') }]);
    const all = await h.upstream.allRecords('crm', 'people');
    await h.upstream.updateRecords('crm', 'people', [{ id: all[0]!.id, email: 'ada@example.com', age: 'thirty-six' }]);
    await h.sync();

    const after = await catalogEntry(h.tm, 'crm', 'people');
    expect(after!.fields.map((f) => f.name).sort()).toEqual(['age', 'email', 'full_name']);
    const renamed = after!.fields.find((f) => f.name === 'full_name')!;
    expect(renamed.column).toBe('full_name');
    // Renamed in place: the column kept its values without a re-read.
    expect(before!.fields.find((f) => f.name === 'name')).toBeDefined();
    await h.expectConverged('crm', 'people');
  });

  it('reads a table again when a function field\'s expression changes upstream (its values change in every record)', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('shop');
    await h.upstream.createTable('shop', 'items', { hasHistory: true }, [
      { name: 'qty', type: 'number', labels: label('Qty') },
      { name: 'total', type: 'function', labels: label('Total'), expression: 'qty * 2' },
    ]);
    await h.upstream.createRecords('shop', 'items', [{ qty: 1 }, { qty: 5 }]);
    await h.sync();
    await h.expectConverged('shop', 'items');
    await h.upstream.patchField('shop', 'items', 'total', { expression: 'qty * 10' });
    await h.engine.runCycle();
    await h.expectConverged('shop', 'items');
  });

  it('a schema change the mirror refuses for one table (a view of a user\'s own on a dropped column) holds that table back; the others go on', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [
      { name: 'name', type: 'string', labels: label('Name') }, { name: 'note', type: 'string', labels: label('Note') },
    ]);
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: label('Title') }]);
    await h.upstream.createRecords('crm', 'people', [{ name: 'Ada', note: 'x' }]);
    await h.sync();
    const people = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    const mine = h.tm.table(`wsm_own_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`);
    await h.tm.sql(`CREATE VIEW ${mine} AS SELECT "id", "note" FROM ${people}`);

    await h.upstream.deleteField('crm', 'people', 'note');
    await h.upstream.addFields('crm', 'deals', [{ name: 'stage', type: 'string', labels: label('Stage') }]);
    await h.upstream.createRecords('crm', 'deals', [{ title: 'big', stage: 'won' }]);
    const report = await h.engine.runCycle();
    expect(report.tables.find((t) => t.table === 'crm.people')).toMatchObject({
      action: 'failed', error: { code: 'MIRROR', message: expect.stringMatching(/refused the schema change of table crm\.people/) },
    });
    await h.expectConverged('crm', 'deals');

    await h.tm.sql(`DROP VIEW ${mine}`);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('crm', 'people');

    // A view of one's own on the readable view of deals lets fields be added to deals: the view is
    // made again in place, its new column at the end.
    const deals = h.tm.table(`${(await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName}_v`);
    await h.tm.sql(`CREATE VIEW ${mine} AS SELECT "id", "title" FROM ${deals}`);
    await h.upstream.addFields('crm', 'deals', [{ name: 'amount', type: 'number', labels: label('Amount') }]);
    await h.upstream.addFields('crm', 'people', [{ name: 'age', type: 'number', labels: label('Age') }]);
    expect((await h.engine.runCycle()).ok).toBe(true);
    await h.expectConverged('crm', 'deals');
    await h.expectConverged('crm', 'people');
    expect(await h.tm.sql(`SELECT "title" FROM ${mine}`)).toEqual([{ title: 'big' }]);
    await h.tm.sql(`DROP VIEW ${mine}`);
  });

  it('follows a field retyped to appointment and back (a tstzrange column on Postgres)', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('cal');
    await h.upstream.createTable('cal', 'events', { hasHistory: true }, [
      { name: 'title', type: 'string', labels: label('Title') },
      { name: 'slot', type: 'string', labels: label('Slot') },
    ]);
    const [id] = await h.upstream.createRecords('cal', 'events', [{ title: 'standup', slot: 'mornings' }]);
    await h.sync();
    const retype = async (type: 'string' | 'appointment', slot: string) => {
      await h.upstream.deleteField('cal', 'events', 'slot');
      await h.upstream.addFields('cal', 'events', [{ name: 'slot', type, labels: label('Slot') }]);
      await h.upstream.updateRecords('cal', 'events', [{ id: id!, slot }]);
      await h.sync();
      await h.expectConverged('cal', 'events');
      const entry = await catalogEntry(h.tm, 'cal', 'events');
      const [row] = await h.tm.sql<{ type: string }>(h.tm.dialect === 'postgres'
        ? `SELECT pg_typeof("slot")::text AS type FROM ${h.tm.table(entry!.sqlName)}`
        : `SELECT typeof("slot") AS type FROM ${h.tm.table(entry!.sqlName)}`);
      return row!.type;
    };
    expect(await retype('appointment', '[2026-01-31T09:00:00.000Z,2026-01-31T09:15:00.000Z)')).toBe(dialect.dialect === 'postgres' ? 'tstzrange' : 'text');
    expect(await retype('string', 'afternoons')).toBe('text');
  });

  it('creates, renames in place and drops tables; two modules may share a table name', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('sales');
    await h.upstream.createModule('support');
    for (const module of ['sales', 'support']) {
      await h.upstream.createTable(module, 'tickets', { hasHistory: true }, [{ name: 'title', type: 'string', labels: label('Title') }]);
      await h.upstream.createRecords(module, 'tickets', [{ title: `${module} 1` }, { title: `${module} 2` }]);
    }
    await h.sync();
    expect(await relationNames(h)).toEqual(['sales__tickets', 'support__tickets']);
    await h.expectConverged('sales', 'tickets');
    await h.expectConverged('support', 'tickets');

    await h.upstream.patchTable('sales', 'tickets', { name: 'deals' });
    await h.upstream.deleteTable('support', 'tickets');
    await h.upstream.createTable('support', 'faq', { hasHistory: false }, [{ name: 'q', type: 'string', labels: label('Q') }]);
    await h.upstream.createRecords('support', 'faq', [{ q: 'why?' }]);
    const report = await h.sync();
    expect(report.schema.reread).toBe(true);
    expect(await relationNames(h)).toEqual(['sales__deals', 'support__faq']);
    await h.expectConverged('sales', 'deals');
    await h.expectConverged('support', 'faq');
    // Renamed in place: the rows were not read again.
    const deals = report.tables.find((t) => t.table === 'sales.deals')!;
    expect(deals.action).toBe('changes');
  });

  it('quotes keyword names and keeps 100-character names distinct and stable', async () => {
    h = await startSyncHarness(dialect);
    const long = (suffix: string) => `${'a'.repeat(97)}_${suffix}`;
    await h.upstream.createModule('m');
    await h.upstream.createTable('m', long('t1'), { hasHistory: true }, [
      { name: 'order', type: 'number', labels: label('Order') },
      { name: 'select', type: 'string', labels: label('Select') },
      { name: 'user', type: 'string', labels: label('User') },
      { name: 'group', type: 'string', labels: label('Group') },
      { name: long('f1'), type: 'string', labels: label('Long 1') },
      { name: long('f2'), type: 'string', labels: label('Long 2') },
      { name: 'id', type: 'string', labels: label('Id clash') },
    ]);
    await h.upstream.createTable('m', long('t2'), { hasHistory: true }, [{ name: 'x', type: 'number', labels: label('X') }]);
    await h.upstream.createRecords('m', long('t1'), [
      { order: 1, select: 's', user: 'u', group: 'g', [long('f1')]: 'one', [long('f2')]: 'two', id: 'not the record id' },
    ]);
    await h.upstream.createRecords('m', long('t2'), [{ x: 5 }]);
    await h.sync();
    const t1 = await catalogEntry(h.tm, 'm', long('t1'));
    const t2 = await catalogEntry(h.tm, 'm', long('t2'));
    expect(t1!.sqlName).not.toBe(t2!.sqlName);
    const columns = t1!.fields.map((f) => f.column);
    expect(new Set(columns).size).toBe(columns.length);
    expect(columns).not.toContain('id');
    if (dialect.dialect === 'postgres') {
      for (const name of [t1!.sqlName, t2!.sqlName, ...columns]) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    }
    await h.expectConverged('m', long('t1'));
    await h.expectConverged('m', long('t2'));

    // Stable: another schema change elsewhere re-plans without re-creating anything.
    await h.upstream.createTable('m', 'other', {}, []);
    const again = await h.sync();
    expect(again.schema.operations.filter((op) => /drop|rename/i.test(op))).toEqual([]);
    expect((await catalogEntry(h.tm, 'm', long('t1')))!.sqlName).toBe(t1!.sqlName);
  });
});
