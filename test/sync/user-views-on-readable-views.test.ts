import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const label = (text: string) => ({ '': text });

/** crm.companies, crm.deals (referencing companies) and crm.notes, one record each, synced. */
async function referencingTables(h: SyncHarness): Promise<void> {
  await h.upstream.createModule('crm');
  await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [
    { name: 'name', type: 'string', labels: label('Name') }, { name: 'city', type: 'string', labels: label('City') },
  ]);
  await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [
    { name: 'title', type: 'string', labels: label('Title') },
    { name: 'company', type: 'reference', labels: label('Company'), refTableName: 'companies' },
  ]);
  await h.upstream.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'text', type: 'string', labels: label('Text') }]);
  const [company] = await h.upstream.createRecords('crm', 'companies', [{ name: 'Acme', city: 'Paris' }]);
  await h.upstream.createRecords('crm', 'deals', [{ title: 'big', company: Number(company) }]);
  await h.upstream.createRecords('crm', 'notes', [{ text: 'first' }]);
  await h.sync();
}

/** A view of the user's own on the readable view of deals, made through a separate connection. */
async function ownViewOnDeals(h: SyncHarness, columns: string): Promise<string> {
  const mine = h.tm.table(`mine_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`);
  const deals = h.tm.table(`${(await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName}_v`);
  await h.tm.sql(`CREATE VIEW ${mine} AS SELECT ${columns} FROM ${deals}`);
  return mine;
}

forEachDialect('pull: views of users\' own on the readable views', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('a change of a referenced table keeps a user\'s view on the readable view of a table referencing it working', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const mine = await ownViewOnDeals(h, '"title", "company_label"');

    // Fields of companies added and renamed (its display field among them): deals' view keeps its columns.
    await h.upstream.addFields('crm', 'companies', [{ name: 'phone', type: 'string', labels: label('Phone') }]);
    await h.upstream.patchField('crm', 'companies', 'name', { name: 'legal_name' });
    await h.upstream.createRecords('crm', 'notes', [{ text: 'second' }]);
    const report = await h.engine.runCycle();
    expect(report.tables.filter((t) => t.action === 'failed')).toEqual([]);
    for (const table of ['companies', 'deals', 'notes']) await h.expectConverged('crm', table);
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);

    // The display field dropped: deals' view shows the next one (city), still under the user's view.
    await h.upstream.deleteField('crm', 'companies', 'legal_name');
    expect((await h.engine.runCycle()).tables.filter((t) => t.action === 'failed')).toEqual([]);
    await h.expectConverged('crm', 'companies');
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Paris' }]);
    if (dialect.dialect === 'postgres') {
      // Made again in place with its comments, which name the display column it now shows.
      const [comment] = await h.tm.sql<{ text: string }>(`SELECT col_description(a.attrelid, a.attnum) AS text FROM pg_attribute a
        WHERE a.attrelid = $1::regclass AND a.attname = 'company_label'`, [h.tm.table(`${(await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName}_v`)]);
      expect(comment!.text).toBe(`Company (city of ${(await catalogEntry(h.tm, 'crm', 'companies'))!.sqlName})`);
    }

    // companies deleted upstream, and with it deals' reference field, whose label the user's view
    // selects: deals' change waits for the user, companies' drop applies (deals' view, made again
    // in place, shows no display value meanwhile).
    await h.upstream.deleteTable('crm', 'companies');
    const failed = (await h.engine.runCycle()).tables.filter((t) => t.action === 'failed');
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error!.message).toMatch(/drop that object of yours/);
    expect(await catalogEntry(h.tm, 'crm', 'companies')).toBeUndefined();
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: null }]);
  });

  it('a change that has to drop a readable view a user\'s view depends on fails that table alone, naming the view; the cycle goes on', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const mine = await ownViewOnDeals(h, '"title", "company_label"');

    // deals loses the column the user's view selects; companies (which deals references) changes too.
    await h.upstream.deleteField('crm', 'deals', 'title');
    await h.upstream.addFields('crm', 'companies', [{ name: 'phone', type: 'string', labels: label('Phone') }]);
    await h.upstream.createRecords('crm', 'notes', [{ text: 'second' }]);
    const report = await h.engine.runCycle();
    const failed = report.tables.filter((t) => t.action === 'failed');
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error).toMatchObject({ code: 'MIRROR', message: expect.stringMatching(/refused the schema change of table crm\.deals/) });
    // Names the user's view and what to do.
    expect(failed[0]!.error!.message).toContain(`mine_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`);
    expect(failed[0]!.error!.message).toMatch(/drop that object of yours: the next cycle applies the change/);
    await h.expectConverged('crm', 'companies');
    await h.expectConverged('crm', 'notes');
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);

    // Once the user's view is gone, the next cycle applies deals' change.
    await h.tm.sql(`DROP VIEW ${mine}`);
    expect((await h.engine.runCycle()).tables.filter((t) => t.action === 'failed')).toEqual([]);
    await h.expectConverged('crm', 'deals');
  });
});
