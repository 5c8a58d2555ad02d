import { expect, it } from 'vitest';
import type { Field } from '../../src/api/field.ts';
import { SCHEMA_CURSOR_KEY, recordCursorKey } from '../../src/mirror/catalog.ts';
import { MirrorError } from '../../src/mirror/errors.ts';
import { planSchema } from '../../src/mirror/schema-planner.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { EVERY_TYPE, field, module, sync, table, workspace } from './fixtures.ts';

/** Column name → declared SQL type, read through the separate connection. */
async function columnTypes(t: TestMirror, sqlTable: string): Promise<Record<string, string>> {
  if (t.dialect === 'postgres') {
    const rows = await t.sql<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [t.pgSchema, sqlTable],
    );
    return Object.fromEntries(rows.map((r) => [r.column_name, r.data_type]));
  }
  const rows = await t.sql<{ name: string; type: string }>(`SELECT name, type FROM pragma_table_info(?)`, [sqlTable]);
  return Object.fromEntries(rows.map((r) => [r.name, r.type]));
}

async function tableNames(t: TestMirror): Promise<string[]> {
  const rows = t.dialect === 'postgres'
    ? await t.sql<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`, [t.pgSchema])
    : await t.sql<{ name: string }>(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`);
  return rows.map((r) => r.name).filter((n) => !n.startsWith('_wsmirror_')).sort();
}

async function catalogFields(t: TestMirror) {
  return t.sql<{ table_id: string; field_id: string; field_name: string; field_type: string; column_name: string; sql_type: string }>(
    `SELECT * FROM ${t.table('_wsmirror_fields')} ORDER BY "table_id", "position"`,
  );
}

/** Types as the catalog records them (the DDL spelling). */
const PG_DDL_TYPES: Record<string, string> = {
  number: 'double precision', boolean: 'boolean', date: 'date', timestamp: 'timestamptz', range: 'tstzrange', reference: 'bigint', json: 'jsonb', text: 'text',
};
const PG_TYPES: Record<string, string> = {
  number: 'double precision', boolean: 'boolean', date: 'date', timestamp: 'timestamp with time zone', range: 'tstzrange',
  reference: 'bigint', json: 'jsonb', text: 'text',
};
const SQLITE_TYPES: Record<string, string> = {
  number: 'REAL', boolean: 'INTEGER', date: 'TEXT', timestamp: 'TEXT', range: 'TEXT', reference: 'INTEGER', json: 'TEXT', text: 'TEXT',
};
const JSON_TYPES = ['multi', 'dmulti', 'any', 'unknown', 'function', 'lambda', 'reverse', 'rowId', 'void'];

function expectedKind(type: string): string {
  if (['number', 'boolean', 'date', 'timestamp', 'reference'].includes(type)) return type;
  if (type === 'appointment') return 'range';
  return JSON_TYPES.includes(type) ? 'json' : 'text';
}

forEachDialect('mirror schema', ({ dialect, fresh }) => {
  it('creates one table per upstream table with id, _synced_at and a column of the right type per field', async () => {
    const t = await fresh();
    await sync(t.mirror, workspace(module('m1', 'lab', [
      table('t1', 'types', EVERY_TYPE.map((e, i) => field(`f${i}`, `f_${e.type}`, e.type))),
    ])));
    const types = await columnTypes(t, 'lab__types');
    const map = dialect === 'postgres' ? PG_TYPES : SQLITE_TYPES;
    expect(types['id']).toBe(dialect === 'postgres' ? 'bigint' : 'INTEGER');
    expect(types['_synced_at']).toBe(dialect === 'postgres' ? 'timestamp with time zone' : 'TEXT');
    for (const { type } of EVERY_TYPE) expect(types[`f_${type}`], type).toBe(map[expectedKind(type)]);
    expect(Object.keys(types)).toHaveLength(EVERY_TYPE.length + 2);

    const pk = dialect === 'postgres'
      ? await t.sql<{ column_name: string }>(
        `SELECT a.attname AS column_name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = '${t.pgSchema}.lab__types'::regclass AND i.indisprimary`)
      : await t.sql<{ column_name: string }>(`SELECT name AS column_name FROM pragma_table_info('lab__types') WHERE pk = 1`);
    expect(pk).toEqual([{ column_name: 'id' }]);

    const [cat] = await t.sql<{ sql_name: string; mode: string; state: string; has_history: unknown; label: string }>(
      `SELECT * FROM ${t.table('_wsmirror_tables')}`,
    );
    expect(cat).toMatchObject({ sql_name: 'lab__types', mode: 'history', state: 'needs_backfill', label: 'types label' });
    const fields = await catalogFields(t);
    const ddl = dialect === 'postgres' ? PG_DDL_TYPES : SQLITE_TYPES;
    expect(fields.map((f) => [f.field_type, f.sql_type])).toEqual(EVERY_TYPE.map((e) => [e.type, ddl[expectedKind(e.type)]]));
  });

  it('quotes keyword names, keeps two modules\' same-named tables apart, and plans nothing the second time', async () => {
    const t = await fresh();
    const keywordFields = ['order', 'select', 'user', 'group', 'table', 'from', 'constructor', '__proto__'].map((n, i) => field(`k${i}`, n, 'string'));
    const ws = workspace(
      module('m1', 'order', [table('t1', 'select', keywordFields)]),
      module('m2', 'group', [table('t2', 'select', [field('x', 'where', 'number')])]),
    );
    await sync(t.mirror, ws);
    expect(await tableNames(t)).toEqual(['group__select', 'order__select']);
    const values = Object.fromEntries(keywordFields.map((f) => [f.name, `v_${f.name}`]));
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values }] });
    const [row] = await t.sql<Record<string, unknown>>(`SELECT "order", "select", "user", "group", "constructor", "__proto__" AS "proto" FROM ${t.table('order__select')}`);
    expect(row).toEqual({ order: 'v_order', select: 'v_select', user: 'v_user', group: 'v_group', constructor: 'v_constructor', proto: 'v___proto__' });
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values }]);

    expect(planSchema(await t.mirror.readCatalog(), ws).ops).toEqual([]);
    const again = await t.reopen();
    expect(planSchema(await again.readCatalog(), ws).ops).toEqual([]);
  });

  it('shortens 100-character names on Postgres with a stable hash, without collisions', async () => {
    const t = await fresh();
    const long = (c: string, tail: string) => `${c.repeat(100 - tail.length)}${tail}`;
    const fields: Field[] = [
      field('l1', long('f', '1'), 'string'),
      field('l2', long('f', '2'), 'number'),
      field('l3', long('f', ''), 'boolean'),
    ];
    const ws = workspace(module('m1', long('m', ''), [
      table('t1', long('t', 'a'), fields),
      table('t2', long('t', 'b'), [field('l4', long('f', '1'), 'string')]),
    ]));
    await sync(t.mirror, ws);
    const names = await tableNames(t);
    expect(names).toHaveLength(2);
    const fieldRows = await catalogFields(t);
    const columns = fieldRows.filter((f) => f.table_id === 't1').map((f) => f.column_name);
    expect(new Set(columns).size).toBe(3);
    if (dialect === 'postgres') {
      for (const n of [...names, ...columns]) {
        expect(Buffer.byteLength(n)).toBeLessThanOrEqual(63);
        expect(n).toMatch(/_[0-9a-f]{8}$/);
      }
      expect(names[0]!.slice(0, 54)).toBe(names[1]!.slice(0, 54));
    } else {
      expect(names).toEqual([`${long('m', '')}__${long('t', 'a')}`, `${long('m', '')}__${long('t', 'b')}`]);
      expect(columns).toEqual(fields.map((f) => f.name));
    }
    // The catalog maps every upstream name to its SQL name.
    const cols = await columnTypes(t, (await t.sql<{ sql_name: string }>(`SELECT sql_name FROM ${t.table('_wsmirror_tables')} WHERE table_id = 't1'`))[0]!.sql_name);
    expect(Object.keys(cols).sort()).toEqual(['_synced_at', 'id', ...columns].sort());

    await t.mirror.applyRows('t1', { upserts: [{ id: 7, values: { [long('f', '1')]: 'one', [long('f', '2')]: 2, [long('f', '')]: true } }] });
    expect(await t.mirror.readRows('t1', [7])).toEqual([{ id: '7', values: { [long('f', '1')]: 'one', [long('f', '2')]: 2, [long('f', '')]: true } }]);
    expect(planSchema(await (await t.reopen()).readCatalog(), ws).ops).toEqual([]);
  });

  it('renames fields that collide with system columns, and records the mapping', async () => {
    const t = await fresh();
    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'people', [
      field('a', 'id', 'string'),
      field('b', '_synced_at', 'string'),
      field('c', 'f_id', 'string'),
      field('d', '_wsmirror_x', 'number'),
    ])])));
    const fields = await catalogFields(t);
    expect(fields.map((f) => [f.field_name, f.column_name])).toEqual([
      ['id', `f_id_${(await import('../../src/mirror/naming.ts')).hash8('a')}`],
      ['_synced_at', 'f__synced_at'],
      ['f_id', 'f_id'],
      ['_wsmirror_x', 'f__wsmirror_x'],
    ]);
    await t.mirror.applyRows('t1', { upserts: [{ id: 5, values: { id: 'external-5', _synced_at: 'never', f_id: 'real f_id', _wsmirror_x: 3 } }] });
    const [row] = await t.sql<Record<string, unknown>>(`SELECT * FROM ${t.table('crm__people')}`);
    expect(Number(row!['id'])).toBe(5);
    expect(row![fields[0]!.column_name]).toBe('external-5');
    expect(row!['f__synced_at']).toBe('never');
    expect(row!['f_id']).toBe('real f_id');
    expect(row!['_synced_at']).not.toBe('never');
    expect((await t.mirror.readRows('t1', [5]))[0]!.values).toEqual({ id: 'external-5', _synced_at: 'never', f_id: 'real f_id', _wsmirror_x: 3 });
  });

  it('renames tables and columns in place, keeping their rows, including swapped names', async () => {
    const t = await fresh();
    const v1 = workspace(module('m1', 'crm', [
      table('t1', 'deals', [field('a', 'title', 'string'), field('b', 'first', 'number'), field('c', 'second', 'number')]),
      table('t2', 'notes', [field('n', 'body', 'string')]),
    ]));
    await sync(t.mirror, v1);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'x', first: 1, second: 2 } }] });
    await t.mirror.applyRows('t2', { upserts: [{ id: 9, values: { body: 'note' } }] });
    await t.mirror.applyRows('t1', { upserts: [], state: 'ready', cursors: { [recordCursorKey('t1')]: 'c1' } });
    const oidOf = async (relation: string) => (await t.sql<{ oid: number }>(`SELECT '${t.pgSchema}.${relation}'::regclass::oid AS oid`))[0]!.oid;
    const oid = dialect === 'postgres' ? await oidOf('crm__deals') : 0;
    const viewOid = dialect === 'postgres' ? await oidOf('crm__deals_v') : 0;

    // Module renamed, table t1 renamed to the old name of t2 and t2 to t1's: a swap.
    // Fields: title renamed, first and second swap their names.
    const v2 = workspace(module('m1', 'sales', [
      table('t1', 'notes', [field('a', 'headline', 'string'), field('b', 'second', 'number'), field('c', 'first', 'number')]),
      table('t2', 'deals', [field('n', 'body', 'string')]),
    ]));
    const plan = await sync(t.mirror, v2);
    expect(plan.ops.map((o) => o.op)).not.toContain('dropTable');
    expect(plan.ops.map((o) => o.op)).not.toContain('createTable');
    expect(plan.ops.map((o) => o.op)).not.toContain('dropColumn');
    expect(await tableNames(t)).toEqual(['sales__deals', 'sales__notes']);
    const [row] = await t.sql<Record<string, unknown>>(`SELECT "id", "headline", "first", "second" FROM ${t.table('sales__notes')}`);
    expect(row).toMatchObject({ headline: 'x', first: 2, second: 1 });
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values: { headline: 'x', second: 1, first: 2 } }]);
    expect(await t.mirror.readRows('t2', [9])).toEqual([{ id: '9', values: { body: 'note' } }]);
    if (dialect === 'postgres') {
      expect(await oidOf('sales__notes')).toBe(oid);
      // Its readable view too, renamed with it and its columns (views of users' own on it stay).
      expect(await oidOf('sales__notes_v')).toBe(viewOid);
    }
    const [viewRow] = await t.sql<Record<string, unknown>>(`SELECT "headline", "first", "second" FROM ${t.table('sales__notes_v')}`);
    expect(viewRow).toEqual({ headline: 'x', first: 2, second: 1 });
    // Renames alone need no re-read, and keep the cursor.
    const catalog = await t.mirror.readCatalog();
    expect(catalog.tables.find((x) => x.tableId === 't1')).toMatchObject({ sqlName: 'sales__notes', state: 'ready', moduleName: 'sales' });
    expect(await t.mirror.getCursor(recordCursorKey('t1'))).toBe('c1');
    expect(planSchema(catalog, v2).ops).toEqual([]);
  });

  it('retypes a column: rebuilt when the storage changes, kept otherwise; the table needs a re-read', async () => {
    const t = await fresh();
    const v1 = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'amount', 'number'), field('b', 'notes', 'string')])]));
    await sync(t.mirror, v1);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { amount: 5, notes: 'n' } }], state: 'ready' });

    const v2 = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'amount', 'string'), field('b', 'notes', 'html')])]));
    const plan = await sync(t.mirror, v2);
    expect(plan.ops.filter((o) => o.op === 'retypeColumn').map((o) => o.op === 'retypeColumn' && [o.field.fieldName, o.rebuild]))
      .toEqual([['amount', true], ['notes', false]]);
    const types = await columnTypes(t, 'crm__deals');
    expect(types['amount']).toBe(dialect === 'postgres' ? 'text' : 'TEXT');
    const [row] = await t.sql<Record<string, unknown>>(`SELECT "amount", "notes" FROM ${t.table('crm__deals')}`);
    expect(row).toEqual({ amount: null, notes: 'n' });
    const catalog = await t.mirror.readCatalog();
    expect(catalog.tables[0]!.state).toBe('needs_backfill');
    expect(catalog.fields.map((f) => [f.fieldName, f.fieldType])).toEqual([['amount', 'string'], ['notes', 'html']]);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { amount: 'five', notes: '<b>n</b>' } }] });
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values: { amount: 'five', notes: '<b>n</b>' } }]);
  });

  it('retypes a field to and from appointment: the column is rebuilt (tstzrange on Postgres) and the table re-read', async () => {
    const t = await fresh();
    const as = (type: 'string' | 'appointment') => workspace(module('m1', 'crm', [table('t1', 'deals', [field('m', 'meeting', type)])]));
    const meeting = '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)';
    await sync(t.mirror, as('string'));
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { meeting: 'after lunch' } }], state: 'ready' });

    const toAppointment = await sync(t.mirror, as('appointment'));
    expect(toAppointment.ops.filter((o) => o.op === 'retypeColumn').map((o) => o.op === 'retypeColumn' && o.rebuild)).toEqual([true]);
    expect((await columnTypes(t, 'crm__deals'))['meeting']).toBe(dialect === 'postgres' ? 'tstzrange' : 'TEXT');
    expect(await t.sql(`SELECT "meeting" FROM ${t.table('crm__deals')}`)).toEqual([{ meeting: null }]);
    expect((await t.mirror.readCatalog()).tables[0]!.state).toBe('needs_backfill');
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { meeting } }], state: 'ready' });
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values: { meeting } }]);
    if (dialect === 'postgres') {
      const [inside] = await t.sql(`SELECT "meeting" @> '2026-01-31T10:00:00Z'::timestamptz AS inside FROM ${t.table('crm__deals')}`);
      expect(inside).toEqual({ inside: true });
    }

    const back = await sync(t.mirror, as('string'));
    expect(back.ops.filter((o) => o.op === 'retypeColumn').map((o) => o.op === 'retypeColumn' && o.rebuild)).toEqual([true]);
    expect((await columnTypes(t, 'crm__deals'))['meeting']).toBe(dialect === 'postgres' ? 'text' : 'TEXT');
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { meeting: 'after lunch' } }], state: 'ready' });
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values: { meeting: 'after lunch' } }]);
  });

  it('rebuilds a column whose SQL type an older layout gave otherwise, with its field unchanged', async () => {
    const t = await fresh();
    const ws = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'amount', 'number')])]));
    await sync(t.mirror, ws);
    // As if an older wsmirror had typed the column otherwise and its migration could not convert it.
    await t.sql(`UPDATE ${t.table('_wsmirror_fields')} SET "sql_type" = '${dialect === 'postgres' ? 'text' : 'TEXT'}'`);
    const reopened = await t.reopen();
    const plan = await sync(reopened, ws);
    expect(plan.ops.map((o) => o.op === 'retypeColumn' && [o.field.fieldName, o.rebuild])).toEqual([['amount', true]]);
    expect((await columnTypes(t, 'crm__deals'))['amount']).toBe(dialect === 'postgres' ? 'double precision' : 'REAL');
    expect((await reopened.readCatalog()).tables[0]!.state).toBe('needs_backfill');
    expect(await sync(reopened, ws).then((p) => p.ops)).toEqual([]);
  });

  it('drops removed columns and tables with their catalog rows and cursors', async () => {
    const t = await fresh();
    const v1 = workspace(module('m1', 'crm', [
      table('t1', 'deals', [field('a', 'title', 'string'), field('b', 'status', 'choice', { options: [{ id: 'o1', name: 'Open', order: 0 }] })]),
      table('t2', 'notes', [field('n', 'body', 'string')]),
    ]));
    await sync(t.mirror, v1);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'x', status: 'o1' } }], cursors: { [recordCursorKey('t1')]: 'c' } });
    await t.mirror.applyRows('t2', { upserts: [{ id: 2, values: { body: 'b' } }], cursors: { [recordCursorKey('t2')]: 'c2' } });
    await t.mirror.setCursor(SCHEMA_CURSOR_KEY, 's');

    const v2 = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'title', 'string')])]));
    await sync(t.mirror, v2);
    expect(await tableNames(t)).toEqual(['crm__deals']);
    expect(Object.keys(await columnTypes(t, 'crm__deals'))).toEqual(['id', '_synced_at', 'title']);
    expect(await t.sql(`SELECT "field_id" FROM ${t.table('_wsmirror_fields')} WHERE "field_id" = 'b'`)).toEqual([]);
    expect(await t.sql(`SELECT * FROM ${t.table('_wsmirror_choice_options')}`)).toEqual([]);
    expect(await t.sql(`SELECT "table_id" FROM ${t.table('_wsmirror_tables')}`)).toEqual([{ table_id: 't1' }]);
    expect(await t.mirror.getCursor(recordCursorKey('t2'))).toBeUndefined();
    expect(await t.mirror.getCursor(recordCursorKey('t1'))).toBe('c');
    expect(await t.mirror.getCursor(SCHEMA_CURSOR_KEY)).toBe('s');
    expect(await t.mirror.readRows('t1', [1])).toEqual([{ id: '1', values: { title: 'x' } }]);
  });

  it('drops and re-creates tables as they move out of and into the include/exclude patterns', async () => {
    const t = await fresh();
    const ws = workspace(
      module('m1', 'crm', [table('t1', 'deals', [field('a', 'title', 'string')]), table('t2', 'audit_log', [field('b', 'x', 'string')])]),
      module('m2', 'hr', [table('t3', 'people', [field('c', 'name', 'string')])]),
    );
    await sync(t.mirror, ws, { include: ['crm.*', 'hr.*'], exclude: ['*.audit_*'] });
    expect(await tableNames(t)).toEqual(['crm__deals', 'hr__people']);
    await t.mirror.applyRows('t1', { upserts: [{ id: 1, values: { title: 'x' } }], state: 'ready' });

    await sync(t.mirror, ws, { include: ['hr.*'] });
    expect(await tableNames(t)).toEqual(['hr__people']);
    await sync(t.mirror, ws, { include: ['*'] });
    expect(await tableNames(t)).toEqual(['crm__audit_log', 'crm__deals', 'hr__people']);
    expect(await t.mirror.countRows('t1')).toBe(0);
    expect((await t.mirror.readCatalog()).tables.find((x) => x.tableId === 't1')!.state).toBe('needs_backfill');
  });

  it('keeps choice options in the catalog so option ids join to names', async () => {
    const t = await fresh();
    const opts = [
      { id: 'o_open', name: 'Open', order: 0, color: '#00ff00' },
      { id: 'o_won', name: 'Won', order: 1, color: '#0000ff', labels: { '': 'Gewonnen' } },
    ];
    const ws = (options: typeof opts) => workspace(module('m1', 'crm', [table('t1', 'deals', [
      field('s', 'status', 'choice', { options }),
      field('g', 'tags', 'multi', { options: [{ id: 'x1', name: 'Hot', order: 0 }, { id: 'x2', name: 'Cold', order: 1 }] }),
      field('d', 'owner', 'dchoice', { options: 'select people' }),
    ])]));
    await sync(t.mirror, ws(opts));
    await t.mirror.applyRows('t1', { upserts: [
      { id: 1, values: { status: 'o_open', tags: ['x1', 'x2'] } },
      { id: 2, values: { status: 'o_won', tags: [] } },
    ] });
    const joined = await t.sql<{ id: unknown; name: string; label: string; color: string }>(
      `SELECT d."id", o."name", o."label", o."color" FROM ${t.table('crm__deals')} d
       JOIN ${t.table('_wsmirror_choice_options')} o ON o."sql_table" = 'crm__deals' AND o."column_name" = 'status' AND o."option_id" = d."status"
       ORDER BY d."id"`,
    );
    expect(joined.map((r) => [Number(r.id), r.name, r.label, r.color])).toEqual([[1, 'Open', 'Open', '#00ff00'], [2, 'Won', 'Gewonnen', '#0000ff']]);
    const multi = await t.sql<{ name: string }>(
      dialect === 'postgres'
        ? `SELECT o."name" FROM ${t.table('crm__deals')} d CROSS JOIN jsonb_array_elements_text(d."tags") AS e(v)
           JOIN ${t.table('_wsmirror_choice_options')} o ON o."sql_table" = 'crm__deals' AND o."column_name" = 'tags' AND o."option_id" = e.v
           WHERE d."id" = 1 ORDER BY o."option_order"`
        : `SELECT o."name" FROM "crm__deals" d, json_each(d."tags") e
           JOIN "_wsmirror_choice_options" o ON o."sql_table" = 'crm__deals' AND o."column_name" = 'tags' AND o."option_id" = e.value
           WHERE d."id" = 1 ORDER BY o."option_order"`,
    );
    expect(multi.map((r) => r.name)).toEqual(['Hot', 'Cold']);

    // Options change: one renamed, one removed, one added.
    await sync(t.mirror, ws([{ id: 'o_open', name: 'Opened', order: 0, color: '#00ff00' }, { id: 'o_lost', name: 'Lost', order: 1, color: '#ff0000' }]));
    const rows = await t.sql<{ option_id: string; name: string; option_order: number }>(
      `SELECT "option_id", "name", "option_order" FROM ${t.table('_wsmirror_choice_options')} WHERE "column_name" = 'status' ORDER BY "option_order"`,
    );
    expect(rows).toEqual([{ option_id: 'o_open', name: 'Opened', option_order: 0 }, { option_id: 'o_lost', name: 'Lost', option_order: 1 }]);
    const [dyn] = await t.sql<{ options: unknown }>(`SELECT "options" FROM ${t.table('_wsmirror_fields')} WHERE "field_id" = 'd'`);
    expect(dialect === 'postgres' ? dyn!.options : JSON.parse(dyn!.options as string)).toBe('select people');
  });

  it('commits DDL, catalog and schema cursor together, or none of them', async () => {
    const t = await fresh();
    const v1 = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'title', 'string')])]));
    await sync(t.mirror, v1);
    await t.mirror.setCursor(SCHEMA_CURSOR_KEY, 'before');
    const v2 = workspace(module('m1', 'crm', [
      table('t1', 'deals', [field('a', 'title', 'string'), field('b', 'amount', 'number')]),
      table('t2', 'alpha', [field('c', 'x', 'string')]),
      table('t3', 'zulu', [field('d', 'y', 'string')]),
    ]));
    const plan = planSchema(await t.mirror.readCatalog(), v2);
    // Another client takes the last table's name after planning: the apply fails at its last DDL.
    await t.sql(`CREATE TABLE ${t.table('crm__zulu')} ("mine" integer)`);
    await expect(t.mirror.applySchemaPlan(plan, { cursors: { [SCHEMA_CURSOR_KEY]: 'after' } })).rejects.toThrow();
    expect(await tableNames(t)).toEqual(['crm__deals', 'crm__zulu']);
    expect(Object.keys(await columnTypes(t, 'crm__deals'))).toEqual(['id', '_synced_at', 'title']);
    expect((await t.sql(`SELECT * FROM ${t.table('_wsmirror_tables')}`)).length).toBe(1);
    expect(await t.mirror.getCursor(SCHEMA_CURSOR_KEY)).toBe('before');

    // Planning again sees the foreign table and picks another name for t3.
    const again = planSchema(await t.mirror.readCatalog(), v2);
    await t.mirror.applySchemaPlan(again, { cursors: { [SCHEMA_CURSOR_KEY]: 'after' } });
    expect(await t.mirror.getCursor(SCHEMA_CURSOR_KEY)).toBe('after');
    const t3 = (await t.mirror.readCatalog()).tables.find((x) => x.tableId === 't3')!;
    expect(t3.sqlName).toMatch(/^crm__zulu_[0-9a-f]{8}$/);
    expect(await t.sql(`SELECT * FROM ${t.table('crm__zulu')}`)).toEqual([]);
  });

  it('refuses a stale plan and a plan for the other dialect', async () => {
    const t = await fresh();
    const ws = workspace(module('m1', 'crm', [table('t1', 'deals', [field('a', 'title', 'string')])]));
    const catalog = await t.mirror.readCatalog();
    const first = planSchema(catalog, ws);
    const second = planSchema(catalog, ws);
    await t.mirror.applySchemaPlan(first);
    await expect(t.mirror.applySchemaPlan(second)).rejects.toThrow(/revision 0 .* at 1; plan again/);
    await expect(t.mirror.applySchemaPlan({ ...first, dialect: dialect === 'sqlite' ? 'postgres' : 'sqlite' }))
      .rejects.toBeInstanceOf(MirrorError);
  });

  it('follows history and new computed fields with a re-read; plain new fields need none', async () => {
    const t = await fresh();
    const base = [field('a', 'title', 'string')];
    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', base)])));
    await t.mirror.setTableState('t1', { state: 'ready', lastPullAt: '2026-01-01T00:00:00.000Z' });

    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', [...base, field('b', 'note', 'string')])])));
    expect((await t.mirror.readCatalog()).tables[0]).toMatchObject({ state: 'ready', lastPullAt: '2026-01-01T00:00:00.000Z' });

    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', [...base, field('b', 'note', 'string'), field('c', 'total', 'function', { expression: '1' })])])));
    expect((await t.mirror.readCatalog()).tables[0]).toMatchObject({ state: 'needs_backfill', lastPullAt: '2026-01-01T00:00:00.000Z' });

    await t.mirror.setTableState('t1', { state: 'ready' });
    await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', [...base, field('b', 'note', 'string'), field('c', 'total', 'function', { expression: '1' })], { hasHistory: false })])));
    expect((await t.mirror.readCatalog()).tables[0]).toMatchObject({ mode: 'fullscan', hasHistory: false, state: 'needs_backfill' });
    const [row] = await t.sql<{ is_read_only: unknown }>(`SELECT "is_read_only" FROM ${t.table('_wsmirror_fields')} WHERE "field_id" = 'c'`);
    expect(row!.is_read_only).toBe(dialect === 'postgres' ? true : 1);
  });

  it.runIf(dialect === 'postgres')('comments tables and columns with their labels', async () => {
    const t = await fresh();
    const ws = (label: string) => workspace(module('m1', 'crm', [table('t1', 'deals', [
      field('a', 'title', 'string', { labels: { '': label, de: 'Titel' } }),
      field('b', 'amount', 'number', { labels: { de: 'Betrag' } }),
      field('c', 'raw', 'string', { labels: {} }),
    ], { labels: { '': "Deals 'n' \\ things" } })]));
    await sync(t.mirror, ws('Title'));
    const comments = async () => Object.fromEntries((await t.sql<{ name: string; comment: string | null }>(
      `SELECT a.attname AS name, col_description(a.attrelid, a.attnum) AS comment FROM pg_attribute a
       WHERE a.attrelid = '${t.pgSchema}.crm__deals'::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
    )).map((r) => [r.name, r.comment]));
    expect(await comments()).toEqual({
      id: 'record id', _synced_at: 'when wsmirror last wrote this row', title: 'Title', amount: 'Betrag', raw: null,
    });
    const tableComment = async () => (await t.sql<{ c: string }>(`SELECT obj_description('${t.pgSchema}.crm__deals'::regclass, 'pg_class') AS c`))[0]!.c;
    expect(await tableComment()).toBe("Deals 'n' \\ things");
    await sync(t.mirror, ws('Headline'));
    expect((await comments())['title']).toBe('Headline');
    const [catalogComment] = await t.sql<{ c: string }>(`SELECT obj_description('${t.pgSchema}._wsmirror_choice_options'::regclass, 'pg_class') AS c`);
    expect(catalogComment!.c).toMatch(/options of choice and multi fields/);
  });
});
