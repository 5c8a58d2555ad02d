import { afterEach, expect, it } from 'vitest';
import type { FieldCreate } from '../../src/api/index.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { catalogEntry, expectedSqlType } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const label = (text: string) => ({ '': text });

/** One field of every creatable type (and a value for each writable one). */
const FIELDS: FieldCreate[] = [
  { name: 'title', type: 'string', labels: label('Title') },
  { name: 'body', type: 'html', labels: label('Body') },
  { name: 'amount', type: 'number', labels: label('Amount') },
  { name: 'active', type: 'boolean', labels: label('Active') },
  { name: 'status', type: 'choice', labels: label('Status'), options: [{ name: 'open' }, { name: 'closed' }] },
  { name: 'tags', type: 'multi', labels: label('Tags'), options: [{ name: 'red' }, { name: 'blue' }] },
  { name: 'owner_pick', type: 'dchoice', labels: label('Pick'), options: 'select companies' },
  { name: 'owner_picks', type: 'dmulti', labels: label('Picks'), options: 'select companies' },
  { name: 'attachment', type: 'file', labels: label('File') },
  { name: 'due', type: 'date', labels: label('Due') },
  { name: 'seen_at', type: 'timestamp', labels: label('Seen at') },
  { name: 'starts', type: 'time', labels: label('Starts') },
  { name: 'slot', type: 'timeinterval', labels: label('Slot') },
  { name: 'meeting', type: 'appointment', labels: label('Meeting') },
  { name: 'glyph', type: 'icon', labels: label('Icon') },
  { name: 'tint', type: 'color', labels: label('Color') },
  { name: 'assignee', type: 'user', labels: label('Assignee') },
  { name: 'company', type: 'reference', labels: label('Company'), refTableName: 'companies' },
  { name: 'total', type: 'function', labels: label('Total'), expression: 'amount * 2' },
];

forEachDialect('pull: every field type', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('mirrors each field type with the SQL type and value DESIGN §3 gives it', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [{ name: 'name', type: 'string', labels: label('Name') }]);
    const [companyId] = await h.upstream.createRecords('crm', 'companies', [{ name: 'Acme' }]);
    await h.upstream.createTable('crm', 'everything', { hasHistory: true }, FIELDS);
    const table = await h.upstream.getTable('crm', 'everything');
    const optionId = (field: string, name: string) =>
      table.fields.find((f: any) => f.name === field).options.find((o: any) => o.name === name).id;
    await h.upstream.createRecords('crm', 'everything', [
      {
        title: 'Renewal', body: '<p>hi</p>', amount: 12.5, active: true, status: optionId('status', 'open'),
        tags: [optionId('tags', 'red'), optionId('tags', 'blue')], owner_pick: companyId, owner_picks: [companyId],
        attachment: 'file-1', due: '2024-02-29', seen_at: '2024-03-01T10:20:30.123Z', starts: '09:30', slot: '09:00-10:00',
        meeting: '[2024-03-01T10:00:00Z,2024-03-01T11:00:00Z)', glyph: 'star', tint: '#aabbcc', assignee: 'user-7',
        company: Number(companyId),
      },
      { title: 'Empty' },
      { title: 'Falsy', amount: 0, active: false, tags: [] },
    ]);

    await h.sync();

    const entry = await catalogEntry(h.tm, 'crm', 'everything');
    expect(entry?.sqlName).toBe('crm__everything');
    const declared = await declaredColumnTypes(h, entry!.sqlName);
    for (const field of table.fields as { name: string; type: string }[]) {
      const column = entry!.fields.find((f) => f.name === field.name)!;
      expect({ field: field.name, type: declared[column.column] }).toEqual({
        field: field.name,
        type: expectedSqlType(dialect.dialect, field.type),
      });
    }
    expect(declared['id']).toBe(dialect.dialect === 'postgres' ? 'bigint' : 'INTEGER');
    expect(declared['_synced_at']).toBeDefined();
    await h.expectConverged('crm', 'everything');
    await h.expectConverged('crm', 'companies');
  });
  it('mirrors the year 0000 the API allows (Postgres stores it as 1 BC) and pushes it back as 0000', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'ages', { hasHistory: true }, [
      { name: 'due', type: 'date', labels: label('Due') },
      { name: 'seen_at', type: 'timestamp', labels: label('Seen') },
      { name: 'meeting', type: 'appointment', labels: label('Meeting') },
      { name: 'note', type: 'string', labels: label('Note') },
    ]);
    const [id] = await h.upstream.createRecords('crm', 'ages', [
      { due: '0000-02-29', seen_at: '0000-06-01T10:00:00.123Z', meeting: '[0000-12-31T23:00:00.000Z,0001-01-01T01:00:00.000Z)', note: 'a' },
      { due: '2026-01-31', note: 'b' },
    ]);
    await h.sync();
    await h.expectConverged('crm', 'ages');
    // A local edit of another column of that record, and one of the date itself.
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'ages'))!.sqlName);
    const set = dialect.dialect === 'postgres' ? `due = DATE '0001-03-01 BC', note = 'edited'` : `due = '0000-03-01', note = 'edited'`;
    await h.tm.sql(`UPDATE ${table} SET ${set} WHERE id = ${Number(id)}`);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'ages'))[0]!.values).toMatchObject({ due: '0000-03-01', note: 'edited', seen_at: '0000-06-01T10:00:00.123Z' });
    await h.expectConverged('crm', 'ages');
  });
});

async function declaredColumnTypes(h: SyncHarness, sqlName: string): Promise<Record<string, string>> {
  if (h.tm.dialect === 'postgres') {
    const rows = await h.tm.sql<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
      [h.tm.pgSchema, sqlName],
    );
    return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
  }
  const rows = await h.tm.sql<{ name: string; type: string }>(`SELECT name, type FROM pragma_table_info(?)`, [sqlName]);
  return Object.fromEntries(rows.map((r) => [r.name, r.type]));
}
