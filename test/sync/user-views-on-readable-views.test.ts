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

/** The readable view of a table, quoted for `h.tm.sql`, as the catalog names it now. */
async function readableView(h: SyncHarness, tableName: string): Promise<string> {
  const [row] = await h.tm.sql<{ view_name: string }>(
    `SELECT view_name FROM ${h.tm.table('_wsmirror_tables')} WHERE module_name = 'crm' AND table_name = ${h.tm.dialect === 'postgres' ? '$1' : '?'}`, [tableName],
  );
  return h.tm.table(row!.view_name);
}

/** The columns of a view, in order, as the database has them. */
async function viewColumns(h: SyncHarness, view: string): Promise<string[]> {
  const rows = h.tm.dialect === 'postgres'
    ? await h.tm.sql<{ name: string }>('SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum', [view])
    : await h.tm.sql<{ name: string }>(`PRAGMA table_info(${view})`);
  return rows.map((r) => r.name);
}

/** Postgres: the view's object id (the same one: made again in place, not dropped) and whether `role` may read it. */
async function pgViewState(h: SyncHarness, view: string, role: string): Promise<{ oid: number; readable: boolean }> {
  const [row] = await h.tm.sql<{ oid: number; readable: boolean }>('SELECT $1::regclass::oid::int AS oid, has_table_privilege($2, $1::regclass, \'SELECT\') AS readable', [view, role]);
  return row!;
}

const failedTables = (report: Awaited<ReturnType<SyncHarness['engine']['runCycle']>>) => report.tables.filter((t) => t.action === 'failed');

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

  it('a field added, a label changed and an option added upstream keep a user\'s view on the table\'s own readable view working; the view grows at its end, in place, grants kept', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    await h.upstream.addFields('crm', 'deals', [{ name: 'stage', type: 'choice', labels: label('Stage'), options: [{ name: 'open' }] }]);
    await h.sync();
    const mine = await ownViewOnDeals(h, '"title", "company_label", "stage_label"');
    const deals = await readableView(h, 'deals');
    const columns = await viewColumns(h, deals);
    const reader = `wsm_bi_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`;
    if (dialect.dialect === 'postgres') {
      await h.tm.sql(`CREATE ROLE ${reader}`);
      await h.tm.sql(`GRANT SELECT ON ${deals} TO ${reader}`);
    }
    try {
      const before = dialect.dialect === 'postgres' ? await pgViewState(h, deals, reader) : undefined;
      await h.upstream.addFields('crm', 'deals', [{ name: 'amount', type: 'number', labels: label('Amount') }]);
      await h.upstream.patchField('crm', 'deals', 'title', { labels: label('Deal title') });
      const stage = (await h.upstream.getTable('crm', 'deals')).fields.find((f: { name: string }) => f.name === 'stage');
      await h.upstream.patchField('crm', 'deals', 'stage', { options: [...stage.options, { name: 'won' }] });
      await h.upstream.createRecords('crm', 'deals', [{ title: 'small', amount: 5 }]);
      expect(failedTables(await h.engine.runCycle())).toEqual([]);
      await h.expectConverged('crm', 'deals');
      expect(await h.tm.sql(`SELECT * FROM ${mine} ORDER BY "title"`)).toEqual([
        { title: 'big', company_label: 'Acme', stage_label: null }, { title: 'small', company_label: null, stage_label: null },
      ]);
      // The new field's column comes last: the columns a user's view reads keep their places.
      expect(await viewColumns(h, deals)).toEqual([...columns, 'amount']);
      if (dialect.dialect === 'postgres') {
        expect(await pgViewState(h, deals, reader)).toEqual({ oid: before!.oid, readable: true });
        const [comment] = await h.tm.sql<{ text: string }>('SELECT col_description($1::regclass, 3) AS text', [deals]);
        expect(comment!.text).toBe('Deal title');
      }
    } finally {
      if (dialect.dialect === 'postgres') {
        await h.tm.sql(`DROP OWNED BY ${reader}`);
        await h.tm.sql(`DROP ROLE ${reader}`);
      }
    }
  });

  it('a field renamed upstream: Postgres renames the readable view\'s column in place and the user\'s view reads on; SQLite, whose views name their columns, holds the table back until the user\'s view goes', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const mine = await ownViewOnDeals(h, '"title", "company_label"');
    const deals = await readableView(h, 'deals');
    const before = dialect.dialect === 'postgres' ? await pgViewState(h, deals, 'postgres') : undefined;

    await h.upstream.patchField('crm', 'deals', 'title', { name: 'headline' });
    await h.upstream.createRecords('crm', 'notes', [{ text: 'second' }]);
    const failed = failedTables(await h.engine.runCycle());
    await h.expectConverged('crm', 'notes');
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);
    if (dialect.dialect === 'postgres') {
      expect(failed).toEqual([]);
      await h.expectConverged('crm', 'deals');
      expect(await viewColumns(h, deals)).toEqual(['id', '_synced_at', 'headline', 'company', 'company_label']);
      expect((await pgViewState(h, deals, 'postgres')).oid).toBe(before!.oid);
      return;
    }
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error!.message).toContain('mine_sqlite');
    expect(failed[0]!.error!.message).toMatch(/would no longer read after this change: no such column: "title".*drop that object of yours/);
    await h.tm.sql(`DROP VIEW ${mine}`);
    expect(failedTables(await h.engine.runCycle())).toEqual([]);
    await h.expectConverged('crm', 'deals');
    expect(await viewColumns(h, deals)).toEqual(['id', '_synced_at', 'headline', 'company', 'company_label']);
  });

  it('two fields swapping names upstream: the user\'s view shows the same field\'s values after (Postgres), or the table is held back until it goes (SQLite, whose views find columns by name)', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [
      { name: 'title', type: 'string', labels: label('Title') }, { name: 'stage', type: 'string', labels: label('Stage') },
    ]);
    await h.upstream.createRecords('crm', 'deals', [{ title: 'big', stage: 'won' }]);
    await h.sync();
    const mine = await ownViewOnDeals(h, '"title"');
    await h.upstream.patchField('crm', 'deals', 'title', { name: 'tmp' });
    await h.upstream.patchField('crm', 'deals', 'stage', { name: 'title' });
    await h.upstream.patchField('crm', 'deals', 'tmp', { name: 'stage' });
    const failed = failedTables(await h.engine.runCycle());
    // Never another field's values under the column the view read.
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big' }]);
    if (dialect.dialect === 'postgres') {
      expect(failed).toEqual([]);
      await h.expectConverged('crm', 'deals');
      return;
    }
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error!.message).toMatch(/mine_sqlite.*title.*drop that object of yours/);
    await h.tm.sql(`DROP VIEW ${mine}`);
    expect(failedTables(await h.engine.runCycle())).toEqual([]);
    await h.expectConverged('crm', 'deals');
  });

  it('a table renamed upstream: Postgres renames its readable view in place and the user\'s view reads on; SQLite holds it back until the user\'s view goes', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const mine = await ownViewOnDeals(h, '"title", "company_label"');
    const before = dialect.dialect === 'postgres' ? await pgViewState(h, await readableView(h, 'deals'), 'postgres') : undefined;

    await h.upstream.patchTable('crm', 'deals', { name: 'deals2' });
    const failed = failedTables(await h.engine.runCycle());
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);
    if (dialect.dialect === 'postgres') {
      expect(failed).toEqual([]);
      await h.expectConverged('crm', 'deals2');
      const renamed = await readableView(h, 'deals2');
      expect(renamed).toMatch(/deals2_v"$/);
      expect((await pgViewState(h, renamed, 'postgres')).oid).toBe(before!.oid);
      return;
    }
    expect(failed.map((t) => t.table)).toEqual(['crm.deals2']);
    expect(failed[0]!.error!.message).toMatch(/drop that object of yours/);
    await h.tm.sql(`DROP VIEW ${mine}`);
    expect(failedTables(await h.engine.runCycle())).toEqual([]);
    await h.expectConverged('crm', 'deals2');
  });

  it('a field deleted upstream that a user\'s view does not read: SQLite applies it under the view; Postgres, which can drop a view\'s column only with the view, holds the table back, saying what to do', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    await h.upstream.addFields('crm', 'deals', [{ name: 'amount', type: 'number', labels: label('Amount') }]);
    await h.sync();
    const mine = await ownViewOnDeals(h, '"title", "company_label"');
    const deals = await readableView(h, 'deals');

    await h.upstream.deleteField('crm', 'deals', 'amount');
    await h.upstream.createRecords('crm', 'notes', [{ text: 'second' }]);
    const failed = failedTables(await h.engine.runCycle());
    await h.expectConverged('crm', 'notes');
    await h.expectConverged('crm', 'companies');
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);
    if (dialect.dialect === 'sqlite') {
      expect(failed).toEqual([]);
      await h.expectConverged('crm', 'deals');
      expect(await viewColumns(h, deals)).toEqual(['id', '_synced_at', 'title', 'company', 'company_label']);
      return;
    }
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error!.message).toMatch(/view [\w.]*mine_\w+ depends on view [\w.]*deals_v; drop that object of yours/);
  });

  it('one change renaming a field of companies and deleting the field of deals a user\'s view reads holds back deals alone', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const mine = await ownViewOnDeals(h, '"title", "company_label"');

    await h.upstream.patchField('crm', 'companies', 'city', { name: 'town' });
    await h.upstream.deleteField('crm', 'deals', 'title');
    const failed = failedTables(await h.engine.runCycle());
    expect(failed.map((t) => t.table)).toEqual(['crm.deals']);
    expect(failed[0]!.error!.message).toContain(`mine_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`);
    await h.expectConverged('crm', 'companies');
    expect((await catalogEntry(h.tm, 'crm', 'companies'))!.fields.map((f) => f.column)).toEqual(['name', 'town']);
    expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ title: 'big', company_label: 'Acme' }]);
  });

  it('a table deleted upstream that a user\'s view reads, through its readable view or directly, is held back until the user\'s view goes', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await referencingTables(h);
    const notes = (await catalogEntry(h.tm, 'crm', 'notes'))!.sqlName;
    const mine = h.tm.table(`mine_${(h.tm.pgSchema ?? 'sqlite').slice(-8)}`);
    await h.upstream.deleteTable('crm', 'notes');
    await h.upstream.createRecords('crm', 'deals', [{ title: 'small' }]);
    for (const read of [`${notes}_v`, notes]) {
      await h.tm.sql(`CREATE VIEW ${mine} AS SELECT "text" FROM ${h.tm.table(read)}`);
      const failed = failedTables(await h.engine.runCycle());
      expect(failed.map((t) => t.table)).toEqual(['crm.notes']);
      expect(failed[0]!.error!.message).toMatch(/drop that object of yours/);
      await h.expectConverged('crm', 'deals');
      expect(await h.tm.sql(`SELECT * FROM ${mine}`)).toEqual([{ text: 'first' }]);
      await h.tm.sql(`DROP VIEW ${mine}`);
    }
    expect(failedTables(await h.engine.runCycle())).toEqual([]);
    expect(await catalogEntry(h.tm, 'crm', 'notes')).toBeUndefined();
  });
});
