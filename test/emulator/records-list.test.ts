import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

let fx: RecordsFixture;
let ids: string[];
let opt: Record<string, string>;

const ROWS = [
  { name: 'carol', age: 35, active: true, status: 'closed', tags: ['x'], born: '1990-05-01' },
  { name: 'alice', age: 30, active: false, status: 'open', tags: ['x', 'y'], born: '1995-01-01' },
  { name: 'bob', age: null, active: true, status: 'open', tags: [], born: null },
  { name: 'dave', age: 30, active: null, status: null, tags: ['y'], born: '1980-12-31' },
  { name: 'erin', age: 41.5, active: true, status: 'pending', tags: null, born: '2000-02-29' },
];

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'people', {}, [
    field('name', 'string'),
    field('age', 'number'),
    field('active', 'boolean'),
    // Option order differs from the alphabetical order of names and ids.
    field('status', 'choice', { options: [{ name: 'pending', order: 2 }, { name: 'open', order: 0 }, { name: 'closed', order: 1 }] }),
    field('tags', 'multi', { options: [{ name: 'x' }, { name: 'y' }] }),
    field('born', 'date'),
    field('calc', 'function', { expression: 'age * 2' }),
  ]);
  const table = await fx.ws.getTable(MODULE, 'people');
  opt = {};
  for (const f of table.fields) for (const o of Array.isArray(f.options) ? f.options : []) opt[o.name] = o.id;
  ids = await fx.ws.createRecords(MODULE, 'people', ROWS);
});
afterAll(() => fx.emu.close());

async function list(query: Record<string, unknown> = {}) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) qs.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const s = qs.toString();
  return fx.api('GET', `${fx.records('people')}${s ? `?${s}` : ''}`);
}

async function names(query: Record<string, unknown>) {
  const res = await list(query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((r: any) => r.values.name);
}

describe('records list', () => {
  it('defaults to id order, limit 100, offset 0, every field present', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.page_info).toEqual({ has_more: false, limit: 100, offset: 0 });
    expect(res.body.data.map((r: any) => r.id)).toEqual(ids);
    expect(res.body.data[2]).toEqual({
      id: ids[2],
      values: { name: 'bob', age: null, active: true, status: opt.open, tags: [], born: null, calc: null },
    });
  });

  // Paging and its has_more flags are records.list.paging of the conformance suite; the emulator's
  // own choices are the order of the pages (record id) and the default page size echoed.
  it('pages in id order, and echoes the default limit past the end', async () => {
    expect((await list({ limit: '2' })).body.data.map((r: any) => r.id)).toEqual(ids.slice(0, 2));
    expect((await list({ limit: '2', offset: '4' })).body.data.map((r: any) => r.id)).toEqual(ids.slice(4));
    const beyond = await list({ offset: '50' });
    expect(beyond.body).toEqual({ data: [], page_info: { has_more: false, limit: 100, offset: 50 } });
  });

  it('rejects limit outside 1-100 and a negative or malformed offset', async () => {
    for (const q of [{ limit: '0' }, { limit: '101' }, { limit: 'x' }, { offset: '-1' }, { offset: '1.5' }]) {
      const res = await list(q);
      expect(res.status, JSON.stringify(q)).toBe(400);
      expect(res.body.error.message).toMatch(/^query\./);
    }
  });

  it('narrows values with fields, keeping field order; id may be named', async () => {
    const res = await list({ fields: 'status,name,id', limit: '1' });
    expect(res.body.data[0]).toEqual({ id: ids[0], values: { name: 'carol', status: opt.closed } });
  });

  it('rejects unknown names in fields, filter and sort with 400 naming them', async () => {
    const a = await list({ fields: 'name,nope,zzz' });
    expect(a.status).toBe(400);
    expect(a.body.error.message).toContain('query.fields: unknown fields "nope", "zzz"');
    const b = await list({ filter: { nope: 1 } });
    expect(b.status).toBe(400);
    expect(b.body.error.message).toContain('query.filter: unknown field "nope"');
    const c = await list({ sort: '-nope' });
    expect(c.status).toBe(400);
    expect(c.body.error.message).toContain('query.sort: unknown field "nope"');
    expect((await list({ sort: 'Name' })).status).toBe(400);
    expect((await list({ other: '1' })).status).toBe(400);
  });

  it('filters by value, by any of several values, by null, by id; conditions combine with and', async () => {
    expect(await names({ filter: { age: 30 } })).toEqual(['alice', 'dave']);
    expect(await names({ filter: { age: [35, 41.5] } })).toEqual(['carol', 'erin']);
    expect(await names({ filter: { age: null } })).toEqual(['bob']);
    expect(await names({ filter: { age: [null, 35] } })).toEqual(['carol', 'bob']);
    expect(await names({ filter: { active: true } })).toEqual(['carol', 'bob', 'erin']);
    expect(await names({ filter: { active: false } })).toEqual(['alice']);
    expect(await names({ filter: { status: 'open' } })).toEqual(['alice', 'bob']);
    expect(await names({ filter: { status: opt.open } })).toEqual(['alice', 'bob']);
    expect(await names({ filter: { status: 'no such option' } })).toEqual([]);
    expect(await names({ filter: { tags: 'y' } })).toEqual(['alice', 'dave']);
    expect(await names({ filter: { tags: ['x', 'y'] } })).toEqual(['carol', 'alice', 'dave']);
    expect(await names({ filter: { tags: null } })).toEqual(['bob', 'erin']);
    expect(await names({ filter: { born: '1995-01-01' } })).toEqual(['alice']);
    expect(await names({ filter: { id: ids[3] } })).toEqual(['dave']);
    expect(await names({ filter: { id: [Number(ids[4]), ids[0]] } })).toEqual(['carol', 'erin']);
    expect(await names({ filter: { age: 30, status: 'open' } })).toEqual(['alice']);
    expect(await names({ filter: { age: '30' } })).toEqual(['alice', 'dave']);
    expect(await names({ filter: { age: [] } })).toEqual([]);
  });

  it('rejects malformed filters with 400', async () => {
    for (const filter of ['not json', '[1]', '{"age":{"gt":3}}', JSON.stringify({ age: 'abc' }), JSON.stringify({ id: 'x' })]) {
      const res = await list({ filter });
      expect(res.status, filter).toBe(400);
      expect(res.body.error.message).toMatch(/^query\.filter/);
    }
  });

  it('sorts ascending by name, descending by -name, by id; ties by id; nulls first ascending', async () => {
    expect(await names({ sort: 'name' })).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);
    expect(await names({ sort: '-name' })).toEqual(['erin', 'dave', 'carol', 'bob', 'alice']);
    expect(await names({ sort: 'age' })).toEqual(['bob', 'alice', 'dave', 'carol', 'erin']);
    expect(await names({ sort: '-age' })).toEqual(['erin', 'carol', 'alice', 'dave', 'bob']);
    expect(await names({ sort: 'id' })).toEqual(ROWS.map((r) => r.name));
    expect(await names({ sort: '-id' })).toEqual(ROWS.map((r) => r.name).reverse());
    expect(await names({ sort: 'born' })).toEqual(['bob', 'dave', 'carol', 'alice', 'erin']);
    // Choices sort by option order (open, closed, pending), not by name or id.
    expect(await names({ sort: 'status' })).toEqual(['dave', 'alice', 'bob', 'carol', 'erin']);
    expect(await names({ sort: '-status' })).toEqual(['erin', 'carol', 'alice', 'bob', 'dave']);
  });

  it('sorts, filters and pages together', async () => {
    const res = await list({ sort: '-age', filter: { active: true }, limit: '1', offset: '1' });
    expect(res.body.data.map((r: any) => r.values.name)).toEqual(['carol']);
    expect(res.body.page_info).toEqual({ has_more: true, limit: 1, offset: 1 });
  });

  it('pages through a larger table with deletions, each record once, both directions', async () => {
    await fx.ws.createTable(MODULE, 'many', {}, [field('n', 'number')]);
    const created = await fx.ws.createRecords(MODULE, 'many', Array.from({ length: 250 }, (_, n) => ({ n })), 100);
    const gone = created.filter((_, i) => i % 7 === 3);
    await fx.ws.deleteRecords(MODULE, 'many', gone);
    const left = created.filter((id) => !gone.includes(id));
    for (const [sort, expected] of [['id', left], ['-id', [...left].reverse()]] as const) {
      const seen: string[] = [];
      for (let offset = 0; ; offset += 100) {
        const res = await fx.api('GET', `${fx.records('many')}?sort=${sort}&limit=100&offset=${offset}`);
        seen.push(...res.body.data.map((r: any) => r.id));
        if (!res.body.page_info.has_more) break;
      }
      expect(seen).toEqual(expected);
    }
  });

  it('answers 404 for an unknown table', async () => {
    expect((await fx.api('GET', `modules/${MODULE}/tables/nope/records`)).status).toBe(404);
  });

  it('follows field renames and drops deleted fields from values', async () => {
    await fx.ws.createTable(MODULE, 'renames', {}, [field('a', 'string'), field('b', 'number')]);
    const [id] = await fx.ws.createRecords(MODULE, 'renames', [{ a: 'x', b: 1 }]);
    await fx.ws.patchField(MODULE, 'renames', 'a', { name: 'a2' });
    await fx.ws.deleteField(MODULE, 'renames', 'b');
    const res = await fx.api('GET', `${fx.records('renames')}`);
    expect(res.body.data).toEqual([{ id, values: { a2: 'x' } }]);
  });
});
