import { expect, it } from 'vitest';
import type { Field } from '../../src/api/field.ts';
import type { Workspace } from '../../src/api/workspace.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/** A CRM: companies, and deals with a choice, a multi, a dmulti, a reference and an appointment. */
const STAGE: Field = field('fs', 'stage', 'choice', {
  options: [
    { id: 'o_open', name: 'open', order: 0, labels: { '': 'Open' } },
    { id: 'o_won', name: 'won', order: 1, labels: { '': 'Won' } },
  ],
});
const TAGS: Field = field('ft', 'tags', 'multi', {
  options: [
    { id: 'o_hot', name: 'hot', order: 0, labels: { '': 'Hot' } },
    { id: 'o_big', name: 'big', order: 1 },
  ],
});
const COMPANY_FIELDS = [field('cn', 'name', 'string'), field('cs', 'size', 'number')];
const DEAL_FIELDS = [
  field('fa', 'title', 'string'),
  STAGE,
  TAGS,
  field('fc', 'company', 'reference', { refTableId: 'tc' }),
  field('fp', 'picks', 'dmulti', { options: 'tables.crm.companies.records' }),
  field('fm', 'meeting', 'appointment'),
];

function crm(dealFields: Field[] = DEAL_FIELDS, companyFields: Field[] = COMPANY_FIELDS): Workspace {
  return workspace(module('m1', 'crm', [table('tc', 'companies', companyFields), table('td', 'deals', dealFields)]));
}

async function seeded(fresh: () => Promise<TestMirror>): Promise<TestMirror> {
  const t = await fresh();
  await sync(t.mirror, crm());
  await t.mirror.applyRows('tc', { upserts: [{ id: 10, values: { name: 'Acme', size: 5 } }, { id: 11, values: { name: 'Globex', size: 9 } }], state: 'ready' });
  await t.mirror.applyRows('td', {
    upserts: [
      {
        id: 1,
        values: {
          title: 'first', stage: 'o_open', tags: ['o_big', 'o_hot'], company: 10, picks: ['10', '11'],
          meeting: '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)',
        },
      },
      { id: 2, values: { title: 'second', stage: 'o_won', tags: [], company: 11, picks: null, meeting: null } },
      { id: 3, values: { title: 'third', stage: 'o_gone', tags: ['o_gone'], company: 99 } },
    ],
    state: 'ready', // the end of the first full read
  });
  return t;
}

/** Rows of a view through the separate connection, lists normalised to arrays. */
async function view(t: TestMirror, name: string, columns: string): Promise<Record<string, unknown>[]> {
  return t.sql(`SELECT ${columns} FROM ${t.table(name)} ORDER BY "id"`);
}

/** SQLite shows lists as comma-separated text, Postgres as text arrays. */
function list(t: TestMirror, items: string[] | null): unknown {
  if (items === null) return null;
  if (t.dialect === 'postgres') return items;
  return items.length === 0 ? null : items.join(', ');
}

async function viewColumns(t: TestMirror, name: string): Promise<string[]> {
  if (t.dialect === 'postgres') {
    const rows = await t.sql<{ c: string }>(
      `SELECT column_name AS c FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [t.pgSchema, name],
    );
    return rows.map((r) => r.c);
  }
  return (await t.sql<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [name])).map((r) => r.name);
}

async function indexNames(t: TestMirror, sqlTable: string): Promise<string[]> {
  const rows = t.dialect === 'postgres'
    ? await t.sql<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, [t.pgSchema, sqlTable])
    : await t.sql<{ name: string }>(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?`, [sqlTable]);
  return rows.map((r) => r.name).filter((n) => n.startsWith('_wsmirror_ref_')).sort();
}

forEachDialect('readable views', ({ dialect, fresh }) => {
  it('shows option labels, record display values, id lists and appointment bounds next to the stored values', async () => {
    const t = await seeded(fresh);
    expect(await viewColumns(t, 'crm__deals_v')).toEqual([
      'id', '_synced_at', 'title', 'stage', 'stage_label', 'tags', 'tags_labels', 'company', 'company_label',
      'picks', 'picks_ids', 'meeting', 'meeting_start', 'meeting_end', ...(dialect === 'postgres' ? ['meeting_range'] : []),
    ]);
    const rows = await view(t, 'crm__deals_v',
      '"id", "stage", "stage_label", "tags_labels", "company", "company_label", "picks_ids", "meeting_start", "meeting_end"');
    // Postgres gives the bounds as timestamptz (Date here), SQLite as ISO text.
    const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
    expect(rows.map((r) => ({
      ...r, company: Number(r['company']), id: Number(r['id']), meeting_start: iso(r['meeting_start']), meeting_end: iso(r['meeting_end']),
    }))).toEqual([
      {
        id: 1, stage: 'o_open', stage_label: 'Open', tags_labels: list(t, ['big', 'Hot']), company: 10, company_label: 'Acme',
        picks_ids: list(t, ['10', '11']), meeting_start: '2026-01-31T09:00:00.000Z', meeting_end: '2026-01-31T10:30:00.000Z',
      },
      { id: 2, stage: 'o_won', stage_label: 'Won', tags_labels: list(t, []), company: 11, company_label: 'Globex', picks_ids: null, meeting_start: null, meeting_end: null },
      // An unknown option shows its id; a reference to a record not in the mirror shows nothing.
      { id: 3, stage: 'o_gone', stage_label: 'o_gone', tags_labels: list(t, ['o_gone']), company: 99, company_label: null, picks_ids: null, meeting_start: null, meeting_end: null },
    ]);
    expect(await view(t, 'crm__companies_v', '"name", "size"')).toEqual([{ name: 'Acme', size: 5 }, { name: 'Globex', size: 9 }]);
    if (dialect === 'postgres') {
      const comments = await t.sql<{ name: string; comment: string | null }>(
        `SELECT a.attname AS name, col_description(a.attrelid, a.attnum) AS comment FROM pg_attribute a
         WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND a.attname IN ('id', 'stage_label', 'company_label') ORDER BY a.attnum`,
        [t.table('crm__deals_v')],
      );
      expect(comments).toEqual([
        { name: 'id', comment: 'record id' },
        { name: 'stage_label', comment: 'stage label (option label)' },
        { name: 'company_label', comment: 'company label (name of crm__companies)' },
      ]);
      const [viewComment] = await t.sql(`SELECT obj_description($1::regclass, 'pg_class') AS comment`, [t.table('crm__deals_v')]);
      expect(viewComment).toEqual({ comment: 'deals label' });
      // The table column is a tstzrange; the view's _range shows it, with its bounds as timestamptz.
      const [types] = await t.sql(
        `SELECT pg_typeof(d."meeting")::text AS "column", pg_typeof(v."meeting_range")::text AS "range", pg_typeof(v."meeting_start")::text AS "start"
         FROM ${t.table('crm__deals')} d JOIN ${t.table('crm__deals_v')} v USING ("id") WHERE "id" = 1`,
      );
      expect(types).toEqual({ column: 'tstzrange', range: 'tstzrange', start: 'timestamp with time zone' });
      const ranges = await t.sql(
        `SELECT "id", "meeting_range" @> '2026-01-31T10:00:00Z'::timestamptz AS inside, "meeting_range" = '[2026-01-31T09:00:00Z,2026-01-31T10:30:00Z)'::tstzrange AS same,
           "meeting_range" && tstzrange('2026-01-31T10:00:00Z', '2026-01-31T11:00:00Z') AS overlaps
         FROM ${t.table('crm__deals_v')} ORDER BY "id"`,
      );
      expect(ranges.map((r) => ({ ...r, id: Number(r['id']) }))).toEqual([
        { id: 1, inside: true, same: true, overlaps: true },
        { id: 2, inside: null, same: null, overlaps: null },
        { id: 3, inside: null, same: null, overlaps: null },
      ]);
    }
  });

  it('shows NULL, not an error, for values a local edit left unreadable', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    await t.sql(`UPDATE ${deals} SET "tags" = ${dialect === 'postgres' ? `'"x"'::jsonb` : `'not json'`} WHERE "id" = 1`);
    const badMeetings = [`UPDATE ${deals} SET "meeting" = 'soon' WHERE "id" = 1`, `UPDATE ${deals} SET "meeting" = '[2026-02-30T09:00:00Z,2026-02-30T10:00:00Z)' WHERE "id" = 2`];
    if (dialect === 'postgres') {
      // A tstzrange column takes no such value: the edit is refused, the row keeps its appointment.
      await expect(t.sql(badMeetings[0]!)).rejects.toThrow(/malformed range literal/);
      await expect(t.sql(badMeetings[1]!)).rejects.toThrow(/out of range/);
    } else {
      for (const text of badMeetings) await t.sql(text);
    }
    const rows = await view(t, 'crm__deals_v', '"id", "meeting_start", "meeting_end", "tags_labels"');
    const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
    expect(rows.map((r) => ({ ...r, id: Number(r['id']), meeting_start: iso(r['meeting_start']), meeting_end: iso(r['meeting_end']) }))).toEqual([
      dialect === 'postgres'
        ? { id: 1, meeting_start: '2026-01-31T09:00:00.000Z', meeting_end: '2026-01-31T10:30:00.000Z', tags_labels: null }
        : { id: 1, meeting_start: null, meeting_end: null, tags_labels: null },
      // SQLite shows the text between the brackets as it is.
      { id: 2, meeting_start: dialect === 'postgres' ? null : '2026-02-30T09:00:00Z', meeting_end: dialect === 'postgres' ? null : '2026-02-30T10:00:00Z', tags_labels: list(t, []) },
      { id: 3, meeting_start: null, meeting_end: null, tags_labels: list(t, ['o_gone']) },
    ]);
  });

  it('shows a relabelled option at once: the view reads the option catalog live, no table is re-read', async () => {
    const t = await seeded(fresh);
    const relabelled = { ...STAGE, options: [{ id: 'o_open', name: 'open', order: 0, labels: { '': 'Prospecting' } }, STAGE.options![1]!] } as Field;
    await sync(t.mirror, crm(DEAL_FIELDS.map((f) => (f.id === 'fs' ? relabelled : f))));
    expect((await view(t, 'crm__deals_v', '"stage_label"')).map((r) => r['stage_label'])).toEqual(['Prospecting', 'Won', 'o_gone']);
    const states = await t.sql<{ state: string }>(`SELECT "state" FROM ${t.table('_wsmirror_tables')} WHERE "table_id" = 'td'`);
    expect(states).toEqual([{ state: 'ready' }]); // no re-read asked for
    // Nothing but the option row: the view has no copy of the labels.
    await t.sql(`UPDATE ${t.table('_wsmirror_choice_options')} SET "label" = 'Closed' WHERE "option_id" = 'o_won'`);
    expect((await view(t, 'crm__deals_v', '"stage_label"')).map((r) => r['stage_label'])).toEqual(['Prospecting', 'Closed', 'o_gone']);
  });

  it('a schema change of one table leaves the other tables\' views and triggers alone: a view of your own on them does not block it', async () => {
    const t = await seeded(fresh);
    const withNotes = (noteFields: Field[]) => workspace(module('m1', 'crm', [
      table('tc', 'companies', COMPANY_FIELDS), table('td', 'deals', DEAL_FIELDS), table('tn', 'notes', noteFields),
    ]));
    await sync(t.mirror, withNotes([field('nb', 'body', 'string')]));
    const mine = `wsm_own_${(t.pgSchema ?? 'sqlite').slice(-8)}`;
    await t.sql(`CREATE VIEW ${t.table(mine)} AS SELECT "id", "stage_label" FROM ${t.table('crm__deals_v')}`);
    const triggersBefore = dialect === 'sqlite' ? await t.sql(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'crm__deals' ORDER BY name`) : [];
    await sync(t.mirror, withNotes([field('nb', 'text', 'string'), field('nx', 'extra', 'number')]));
    await sync(t.mirror, withNotes([field('nx', 'extra', 'number')]));
    expect(await viewColumns(t, 'crm__notes_v')).toEqual(['id', '_synced_at', 'extra']);
    expect((await t.sql(`SELECT * FROM ${t.table(mine)} ORDER BY "id"`)).length).toBeGreaterThan(0);
    if (dialect === 'sqlite') {
      expect(await t.sql(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'crm__deals' ORDER BY name`)).toEqual(triggersBefore);
    }
    // A change of the table your view reads is still blocked on Postgres (see below); SQLite allows it.
    await t.sql(`DROP VIEW ${t.table(mine)}`);
  });

  it('a change of a table at the end of a chain of references (notes → deals → companies) re-creates each view once', async () => {
    const t = await seeded(fresh);
    const chain = (companyFields: Field[]) => workspace(module('m1', 'crm', [
      table('tc', 'companies', companyFields), table('td', 'deals', DEAL_FIELDS),
      table('tn', 'notes', [field('nb', 'body', 'string'), field('nd', 'deal', 'reference', { refTableId: 'td' })]),
    ]));
    await sync(t.mirror, chain(COMPANY_FIELDS));
    await sync(t.mirror, chain([...COMPANY_FIELDS, field('cx', 'extra', 'string')]));
    expect(await viewColumns(t, 'crm__companies_v')).toContain('extra');
    expect(await viewColumns(t, 'crm__notes_v')).toEqual(['id', '_synced_at', 'body', 'deal', 'deal_label']);
  });

  if (dialect === 'postgres') {
    it('a view of your own on a readable view blocks a schema change that drops one of its columns, with an error that names your view', async () => {
      const t = await seeded(fresh);
      const mine = `wsm_own_${t.pgSchema!.slice(-8)}`;
      await t.sql(`CREATE VIEW ${t.table(mine)} AS SELECT "id", "stage_label" FROM ${t.table('crm__deals_v')}`);
      const withoutMeeting = DEAL_FIELDS.filter((f) => f.name !== 'meeting');
      await expect(sync(t.mirror, crm(withoutMeeting)))
        .rejects.toThrow(new RegExp(`other objects depend on what this change drops: view [^ ]*${mine} depends on view [^ ]*crm__deals_v$`));
      await t.sql(`DROP VIEW ${t.table(mine)}`);
      await sync(t.mirror, crm(withoutMeeting));
      expect(await viewColumns(t, 'crm__deals_v')).not.toContain('meeting');
    });
  }

  it('makes a table\'s view again in place when its fields swap names or one takes a companion\'s name: a view of yours bound to its columns reads on (Postgres)', async () => {
    const t = await seeded(fresh);
    const mine = `wsm_own_${(t.pgSchema ?? 'sqlite').slice(-8)}`;
    if (dialect === 'postgres') await t.sql(`CREATE VIEW ${t.table(mine)} AS SELECT "id", "title", "stage", "stage_label" FROM ${t.table('crm__deals_v')}`);
    const [title, stage, ...rest] = DEAL_FIELDS;
    // title and stage swap names; then a new field takes the name of stage's companion.
    await sync(t.mirror, crm([{ ...title!, name: 'stage' }, { ...stage!, name: 'title' }, ...rest]));
    const swapped = ['id', '_synced_at', 'stage', 'title', 'title_label', 'tags', 'tags_labels'];
    expect((await viewColumns(t, 'crm__deals_v')).slice(0, 7)).toEqual(swapped);
    expect(await view(t, 'crm__deals_v', '"stage", "title_label"')).toEqual([
      { stage: 'first', title_label: 'Open' }, { stage: 'second', title_label: 'Won' }, { stage: 'third', title_label: 'o_gone' },
    ]);
    await sync(t.mirror, crm([{ ...title!, name: 'stage' }, { ...stage!, name: 'title' }, ...rest, field('fl', 'title_label', 'string')]));
    const columns = await viewColumns(t, 'crm__deals_v');
    expect(columns.slice(0, 4)).toEqual(['id', '_synced_at', 'stage', 'title']);
    expect(columns[4]).toMatch(/^title_label_[0-9a-f]{8}$/);
    expect(columns.at(-1)).toBe('title_label');
    if (dialect === 'postgres') {
      // Bound to the columns, not their names: the same values as before the renames.
      expect(await view(t, mine, '"title", "stage", "stage_label"')).toEqual([
        { title: 'first', stage: 'o_open', stage_label: 'Open' }, { title: 'second', stage: 'o_won', stage_label: 'Won' },
        { title: 'third', stage: 'o_gone', stage_label: 'o_gone' },
      ]);
      await t.sql(`DROP VIEW ${t.table(mine)}`);
    }
  });

  it('follows field add, rename, retype and drop, and the display field of the referenced table', async () => {
    const t = await seeded(fresh);
    // Rename stage → phase, retype tags multi → string, drop meeting, add a second reference.
    const fields = [
      field('fa', 'title', 'string'),
      { ...STAGE, name: 'phase' },
      field('ft', 'tags', 'string'),
      field('fc', 'company', 'reference', { refTableId: 'tc' }),
      field('fp', 'picks', 'dmulti', { options: 'tables.crm.companies.records' }),
      field('fo', 'owner', 'reference', { refTableId: 'td' }),
    ];
    // The companies' display field is renamed: the deals' view follows.
    await sync(t.mirror, crm(fields, [field('cn', 'legal_name', 'string'), COMPANY_FIELDS[1]!]));
    expect(await viewColumns(t, 'crm__deals_v')).toEqual([
      'id', '_synced_at', 'title', 'phase', 'phase_label', 'tags', 'company', 'company_label', 'picks', 'picks_ids', 'owner', 'owner_label',
    ]);
    await t.mirror.applyRows('td', { upserts: [{ id: 4, values: { title: 'fourth', phase: 'o_won', tags: 'plain', company: 10, owner: 1 } }] });
    const [row] = await t.sql(`SELECT "phase_label", "tags", "company_label", "owner_label" FROM ${t.table('crm__deals_v')} WHERE "id" = 4`);
    expect(row).toEqual({ phase_label: 'Won', tags: 'plain', company_label: 'Acme', owner_label: 'first' });
    expect(await indexNames(t, 'crm__deals')).toHaveLength(2);

    // Retype the reference away and drop the other: their indexes go with them.
    await sync(t.mirror, crm([field('fa', 'title', 'string'), field('fc', 'company', 'string')]));
    expect(await viewColumns(t, 'crm__deals_v')).toEqual(['id', '_synced_at', 'title', 'company']);
    expect(await indexNames(t, 'crm__deals')).toEqual([]);
  });

  it('renames the view with its table, never takes a name in use, and drops it with the table', async () => {
    const t = await fresh();
    await t.sql(`CREATE TABLE ${t.table('crm__deals_v')} ("mine" integer)`);
    await sync(t.mirror, crm());
    const names = async () => (await t.sql<{ sql_name: string; view_name: string }>(
      `SELECT "sql_name", "view_name" FROM ${t.table('_wsmirror_tables')} ORDER BY "table_id"`,
    ));
    const [, deals] = await names();
    expect(deals!.view_name).toMatch(/^crm__deals_v_[0-9a-f]{8}$/);
    expect(await viewColumns(t, deals!.view_name)).toContain('stage_label');
    expect(await t.sql(`SELECT * FROM ${t.table('crm__deals_v')}`)).toEqual([]); // the user's table is untouched

    await sync(t.mirror, workspace(module('m1', 'sales', [table('tc', 'companies', COMPANY_FIELDS), table('td', 'deals', DEAL_FIELDS)])));
    expect(await names()).toEqual([
      { sql_name: 'sales__companies', view_name: 'sales__companies_v' },
      { sql_name: 'sales__deals', view_name: 'sales__deals_v' },
    ]);
    expect(await viewColumns(t, 'crm__companies_v')).toEqual([]);
    expect(await viewColumns(t, 'sales__deals_v')).toContain('company_label');

    // Companies leave the mirror: the reference keeps its column, its label column shows nothing.
    await t.mirror.applyRows('td', { upserts: [{ id: 1, values: { company: 10 } }] });
    await sync(t.mirror, workspace(module('m1', 'sales', [table('td', 'deals', DEAL_FIELDS)])));
    expect(await viewColumns(t, 'sales__companies_v')).toEqual([]);
    expect(await view(t, 'sales__deals_v', '"company_label"')).toEqual([{ company_label: null }]);
    const refs = await t.sql(`SELECT "sql_table", "ref_sql_table" FROM ${t.table('_wsmirror_fields')} WHERE "field_id" = 'fc'`);
    expect(refs).toEqual([{ sql_table: 'sales__deals', ref_sql_table: null }]);
  });

  it('records the SQL table of every field and of the table each reference points at', async () => {
    const t = await seeded(fresh);
    const rows = await t.sql<{ field_id: string; sql_table: string; ref_sql_table: string | null }>(
      `SELECT "field_id", "sql_table", "ref_sql_table" FROM ${t.table('_wsmirror_fields')} ORDER BY "table_id", "position"`,
    );
    expect(rows.map((r) => [r.field_id, r.sql_table, r.ref_sql_table])).toEqual([
      ['cn', 'crm__companies', null], ['cs', 'crm__companies', null],
      ['fa', 'crm__deals', null], ['fs', 'crm__deals', null], ['ft', 'crm__deals', null], ['fc', 'crm__deals', 'crm__companies'],
      ['fp', 'crm__deals', null], ['fm', 'crm__deals', null],
    ]);
  });

  it('indexes a new table\'s reference columns when its first full read ends, not row by row during it', async () => {
    const t = await fresh();
    await sync(t.mirror, crm());
    await t.mirror.applyRows('td', { upserts: [{ id: 1, values: { title: 'first', company: 10 } }] });
    expect(await indexNames(t, 'crm__deals')).toEqual([]);
    await t.mirror.applyRows('td', { upserts: [{ id: 2, values: { title: 'second', company: 11 } }], state: 'ready' });
    expect(await indexNames(t, 'crm__deals')).toHaveLength(1);
    // Later full scans end in `ready` too: nothing changes.
    await t.mirror.setTableState('td', { state: 'ready' });
    expect(await indexNames(t, 'crm__deals')).toHaveLength(1);
  });

  it('indexes reference columns: a join through a reference uses the index', async () => {
    const t = await seeded(fresh);
    const [index] = await indexNames(t, 'crm__deals');
    expect(index).toMatch(/^_wsmirror_ref_[0-9a-f]{16}$/);
    const companies = Array.from({ length: 200 }, (_, i) => ({ id: 100 + i, values: { name: `c${i}`, size: i } }));
    await t.mirror.applyRows('tc', { upserts: companies });
    const deals = Array.from({ length: 4000 }, (_, i) => ({ id: 100 + i, values: { title: `d${i}`, company: 100 + (i % 200) } }));
    await t.mirror.applyRows('td', { upserts: deals });
    if (dialect === 'postgres') for (const name of ['crm__companies', 'crm__deals']) await t.sql(`ANALYZE ${t.table(name)}`);
    else await t.sql('ANALYZE');
    const query = `SELECT c."name", d."title" FROM ${t.table('crm__companies')} c JOIN ${t.table('crm__deals')} d ON d."company" = c."id" WHERE c."name" = 'c7'`;
    const plan = dialect === 'postgres'
      ? (await t.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`)).map((r) => r['QUERY PLAN']).join('\n')
      : (await t.sql<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`)).map((r) => r.detail).join('\n');
    expect(plan).toContain(index);
  });
});

forEachDialect('foreign keys', ({ dialect, fresh }) => {
  it('declares a NOT ENFORCED foreign key per reference on PostgreSQL 18 and later, none where it would be enforced', async () => {
    const t = await seeded(fresh); // deal 3 references company 99, which is not there
    const version = dialect === 'postgres'
      ? Number((await t.sql<{ v: number }>(`SELECT current_setting('server_version_num')::int AS v`))[0]!.v)
      : 0;
    const keys = async () => dialect === 'postgres'
      ? t.sql<{ name: string; from: string; to: string }>(
        `SELECT c.conname AS name, c.conrelid::regclass::text AS "from", c.confrelid::regclass::text AS "to"
         FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = $1::regnamespace ORDER BY 1`, [t.pgSchema])
      : t.sql<{ name: string; from: string; to: string }>(
        `SELECT 'fk' AS name, 'crm__deals' AS "from", "table" AS "to" FROM pragma_foreign_key_list('crm__deals')`);
    if (dialect === 'postgres' && version >= 180_000) {
      const [fk] = await keys();
      expect(fk).toMatchObject({ name: expect.stringMatching(/^_wsmirror_fk_[0-9a-f]{16}$/) as unknown, from: expect.stringContaining('crm__deals') as unknown });
      expect(fk!.to).toContain('crm__companies');
      // Not checked: a deleted company and a dangling reference are fine.
      await t.mirror.applyRows('tc', { deletes: [10] });
      await t.mirror.applyRows('td', { upserts: [{ id: 5, values: { title: 'fifth', company: 12345 } }] });
      // Kept in step: the referenced table leaves the mirror, its key goes.
      await sync(t.mirror, workspace(module('m1', 'crm', [table('td', 'deals', DEAL_FIELDS)])));
    }
    expect(await keys()).toEqual([]);
  });
});

forEachDialect('catalog layout 2 → 3', ({ fresh }) => {
  it('gives a mirror made before views its views, reference indexes and field tables when opened', async () => {
    const t = await seeded(fresh);
    for (const name of ['crm__companies_v', 'crm__deals_v']) await t.sql(`DROP VIEW ${t.table(name)}`);
    for (const name of await indexNames(t, 'crm__deals')) await t.sql(`DROP INDEX ${t.table(name)}`);
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_tables')} DROP COLUMN "view_name"`);
    for (const column of ['sql_table', 'ref_sql_table']) await t.sql(`ALTER TABLE ${t.table('_wsmirror_fields')} DROP COLUMN "${column}"`);
    // Layout 4's columns, which a layout-2 mirror lacks too.
    for (const column of ['current_as_of', 'last_error_code', 'last_error', 'last_error_at']) {
      await t.sql(`ALTER TABLE ${t.table('_wsmirror_tables')} DROP COLUMN "${column}"`);
    }
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_outbox')} DROP COLUMN "retried_at"`);
    await t.sql(`UPDATE ${t.table('_wsmirror_meta')} SET "value" = '2' WHERE "key" = 'catalog_version'`);

    const again = await t.reopen();
    expect(await t.sql(`SELECT "sql_name", "view_name" FROM ${t.table('_wsmirror_tables')} ORDER BY "table_id"`)).toEqual([
      { sql_name: 'crm__companies', view_name: 'crm__companies_v' },
      { sql_name: 'crm__deals', view_name: 'crm__deals_v' },
    ]);
    expect(await view(t, 'crm__deals_v', '"stage_label", "company_label"')).toEqual([
      { stage_label: 'Open', company_label: 'Acme' }, { stage_label: 'Won', company_label: 'Globex' }, { stage_label: 'o_gone', company_label: null },
    ]);
    expect(await indexNames(t, 'crm__deals')).toHaveLength(1);
    const [company] = await t.sql(`SELECT "sql_table", "ref_sql_table" FROM ${t.table('_wsmirror_fields')} WHERE "field_id" = 'fc'`);
    expect(company).toEqual({ sql_table: 'crm__deals', ref_sql_table: 'crm__companies' });
    await again.close();
  });
});

forEachDialect('catalog layout 4 → 5', ({ dialect, fresh }) => {
  it('converts the text appointment columns of an older Postgres mirror to tstzrange in place, values and pending edits kept', async () => {
    const t = await seeded(fresh);
    const deals = t.table('crm__deals');
    if (dialect === 'postgres') {
      // The mirror as layout 4 made it: a text column, views through a conversion function.
      for (const name of ['crm__companies_v', 'crm__deals_v']) await t.sql(`DROP VIEW ${t.table(name)}`);
      await t.sql(`ALTER TABLE ${deals} ALTER COLUMN "meeting" TYPE text USING NULL`);
      await t.sql(`UPDATE ${t.table('_wsmirror_fields')} SET "sql_type" = 'text' WHERE "field_id" = 'fm'`);
      await t.sql(`CREATE FUNCTION ${t.table('_wsmirror_tstzrange')}(value text) RETURNS tstzrange LANGUAGE sql AS 'SELECT value::tstzrange'`);
      await t.sql(`CREATE VIEW ${t.table('crm__deals_v')} AS SELECT "id", ${t.table('_wsmirror_tstzrange')}("meeting") AS "meeting_range" FROM ${deals}`);
    }
    const seed = [
      [1, '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)'],
      [3, '[2026-01-31T12:00:00.000Z,2026-01-31T12:00:00.000Z)'], // a point: [t,t) would be Postgres' empty range
    ] as const;
    await t.mirror.applyRows('td', { upserts: seed.map(([id, meeting]) => ({ id, values: { meeting } })) });
    // A local edit made in the text era, still pending.
    await t.sql(`UPDATE ${deals} SET "meeting" = '[2026-03-01T08:00:00Z,2026-03-01T09:00:00Z)' WHERE "id" = 2`);
    await t.sql(`ALTER TABLE ${t.table('_wsmirror_outbox')} DROP COLUMN "retried_at"`);
    await t.sql(`UPDATE ${t.table('_wsmirror_meta')} SET "value" = '4' WHERE "key" = 'catalog_version'`);

    const again = await t.reopen();
    const [type] = await t.sql(dialect === 'postgres'
      ? `SELECT "sql_type", pg_typeof("meeting")::text AS "column" FROM ${t.table('_wsmirror_fields')}, ${deals} WHERE "field_id" = 'fm' AND "id" = 1`
      : `SELECT "sql_type", typeof("meeting") AS "column" FROM ${t.table('_wsmirror_fields')}, ${deals} WHERE "field_id" = 'fm' AND "id" = 1`);
    expect(type).toEqual(dialect === 'postgres' ? { sql_type: 'tstzrange', column: 'tstzrange' } : { sql_type: 'TEXT', column: 'text' });
    expect(await again.readRows('td', [1, 3])).toEqual([
      { id: '1', values: expect.objectContaining({ meeting: seed[0][1] }) as unknown },
      { id: '3', values: expect.objectContaining({ meeting: seed[1][1] }) as unknown },
    ]);
    const [edit] = await again.readPendingEdits({ now: new Date().toISOString(), limit: 10 });
    expect(edit).toMatchObject({ recordId: 2, operation: 'update' });
    expect(edit!.values.get('meeting')).toBe('[2026-03-01T08:00:00.000Z,2026-03-01T09:00:00.000Z)');
    expect(edit!.oldValues.get('meeting')).toBeNull();
    const rows = await view(t, 'crm__deals_v', '"id", "meeting_start", "meeting_end"');
    const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
    expect(rows.map((r) => [Number(r['id']), iso(r['meeting_start']), iso(r['meeting_end'])])).toEqual([
      [1, '2026-01-31T09:00:00.000Z', '2026-01-31T10:30:00.000Z'],
      [2, dialect === 'postgres' ? '2026-03-01T08:00:00.000Z' : '2026-03-01T08:00:00Z', dialect === 'postgres' ? '2026-03-01T09:00:00.000Z' : '2026-03-01T09:00:00Z'],
      [3, '2026-01-31T12:00:00.000Z', '2026-01-31T12:00:00.000Z'],
    ]);
    if (dialect === 'postgres') {
      const functions = await t.sql(`SELECT proname FROM pg_proc WHERE pronamespace = $1::regnamespace AND proname LIKE '%tstzrange%'`, [t.pgSchema]);
      expect(functions).toEqual([]); // neither the old views' function nor the conversion's is left
      // Nothing left for the planner: the next schema check plans no retype.
      expect((await sync(again, crm())).ops.filter((o) => o.op === 'retypeColumn')).toEqual([]);
    }
    await again.close();
  });
});
