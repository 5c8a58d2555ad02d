import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../helpers/schema.ts';
import { MODULE, allRecords, startRecordsFixture, valuesOf, type RecordsFixture } from './record-fixtures.ts';

// Rules that depend on the table: unknown names, options, references, required, unique,
// defaults, record ids, and all-or-nothing.

let fx: RecordsFixture;
let opt: Record<string, string>;

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'orgs');
  await fx.ws.createTable(MODULE, 'people', {}, [
    field('name', 'string', { required: true }),
    field('email', 'string', { unique: true }),
    field('code', 'number', { unique: true }),
    field('status', 'choice', { options: [{ name: 'lead' }, { name: 'client' }], defaultValue: 'lead' }),
    field('tags', 'multi', { options: [{ name: 'vip' }, { name: 'new' }], defaultValue: ['new'] }),
    field('score', 'number', { defaultValue: 10 }),
    field('seen', 'timestamp', { defaultValue: { $nx: 'now()' } }),
    field('org', 'reference', { refTableName: 'orgs' }),
  ]);
  const table = await fx.ws.getTable(MODULE, 'people');
  opt = {};
  for (const f of table.fields) for (const o of Array.isArray(f.options) ? f.options : []) opt[`${f.name}.${o.name}`] = o.id;
  await fx.ws.createRecords(MODULE, 'orgs', [{}, {}]);
});
afterAll(() => fx.emu.close());

const people = () => fx.records('people');

async function state() {
  return { people: await allRecords(fx, 'people'), orgs: await allRecords(fx, 'orgs') };
}

async function createPeople(records: Record<string, unknown>[]) {
  return fx.api('POST', people(), { records });
}

let counter = 0;
const unique = () => `u${++counter}@example.com`;

describe('create', () => {
  it('answers 201 with the new ids as strings, in request order', async () => {
    const res = await createPeople([{ name: 'a' }, { name: 'b' }]);
    expect(res.status).toBe(201);
    expect(res.body.data.ids).toHaveLength(2);
    for (const id of res.body.data.ids) expect(id).toMatch(/^[0-9]+$/);
    expect(Number(res.body.data.ids[1])).toBeGreaterThan(Number(res.body.data.ids[0]));
    expect((await valuesOf(fx, 'people', res.body.data.ids[1])).name).toBe('b');
  });

  it('rejects unknown field names with 400 naming them all', async () => {
    const res = await createPeople([{ name: 'a', nope: 1, other: 2 }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body.records[0]: unknown fields "nope", "other"');
  });

  it('applies literal and $nx defaults to absent fields, not to fields sent as null', async () => {
    const [id] = (await createPeople([{ name: 'd' }])).body.data.ids;
    const values = await valuesOf(fx, 'people', id);
    expect(values).toMatchObject({ status: opt['status.lead'], tags: [opt['tags.new']], score: 10, seen: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const [id2] = (await createPeople([{ name: 'e', status: null, score: null, tags: ['vip'] }])).body.data.ids;
    expect(await valuesOf(fx, 'people', id2)).toMatchObject({ status: null, score: null, tags: [opt['tags.vip']] });
  });

  it('accepts an option name and stores its id', async () => {
    const [id] = (await createPeople([{ name: 'o', status: 'client', tags: ['vip', opt['tags.new']] }])).body.data.ids;
    expect(await valuesOf(fx, 'people', id)).toMatchObject({
      status: opt['status.client'], tags: [opt['tags.vip'], opt['tags.new']],
    });
  });

  it('requires required fields to be present and non-empty', async () => {
    for (const record of [{}, { name: null }, { name: '' }]) {
      const res = await createPeople([{ name: 'ok' }, record]);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body.records[1].name: field name is required');
    }
  });

  // A reference to a record of another table is 400: records.other-table-404 of the conformance suite.
  it('names the record and the table a reference misses', async () => {
    const [personId] = (await createPeople([{ name: 'r' }])).body.data.ids;
    const res = await createPeople([{ name: 'r', org: Number(personId) }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/body\.records\[0\]\.org: record [0-9]+ does not exist in t[0-9]+/);
  });

  it('rejects unique values that repeat in the batch or exist already (nulls may repeat)', async () => {
    const email = unique();
    expect((await createPeople([{ name: 'u', email, code: 1001 }, { name: 'v' }, { name: 'w' }])).status).toBe(201);
    const again = await createPeople([{ name: 'x', email }]);
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/body\.records\[0\]\.email: value .* of unique field email already exists in record/);
    const twice = unique();
    const inBatch = await createPeople([{ name: 'x', email: twice }, { name: 'y', email: twice }]);
    expect(inBatch.status).toBe(400);
    expect(inBatch.body.error.message).toContain('body.records[1].email');
    expect((await createPeople([{ name: 'x', code: 1001 }])).status).toBe(400);
  });

  // All-or-nothing creates, the body's shape and the 404s: records.create.transactional of the
  // conformance suite.
});

describe('update', () => {
  // Only the values sent change, ids as numbers or strings: records.update; a missing record (404),
  // ids that are no ids (400), a record of another table (404) and all-or-nothing updates:
  // records.update.transactional, records.invalid-id-400 and records.other-table-404 of the
  // conformance suite. What stays is the emulator's wording and its own idea of an id.
  it('names the missing record and the place of a bad id; 0, -1, "01" and a repeated id are 400; nothing changes', async () => {
    const [a] = (await createPeople([{ name: 'a' }])).body.data.ids;
    const before = await state();
    const missing = await fx.api('PATCH', people(), { records: [{ id: a, name: 'z' }, { id: 987654321, name: 'z' }] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('987654321');
    for (const id of ['abc', 0, -1, 1.5, '01', null]) {
      const res = await fx.api('PATCH', people(), { records: [{ id: a, name: 'z' }, { id, name: 'z' }] });
      expect(res.status, JSON.stringify(id)).toBe(400);
      expect(res.body.error.message).toContain('body.records[1]');
    }
    const repeated = await fx.api('PATCH', people(), { records: [{ id: a, name: 'y' }, { id: Number(a), name: 'z' }] });
    expect(repeated.status).toBe(400);
    expect(repeated.body.error.message).toContain(`record id ${a} repeats`);
    expect(await state()).toEqual(before);
  });

  it('cannot clear a required field', async () => {
    const [a] = (await createPeople([{ name: 'a' }])).body.data.ids;
    for (const name of [null, '']) {
      const res = await fx.api('PATCH', people(), { records: [{ id: a, name }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body.records[0].name: field name is required and cannot be cleared');
    }
  });

  it('keeps unique values unique, but lets a batch swap or re-set them', async () => {
    const e1 = unique();
    const e2 = unique();
    const [a, b] = (await createPeople([{ name: 'a', email: e1 }, { name: 'b', email: e2 }])).body.data.ids;
    const clash = await fx.api('PATCH', people(), { records: [{ id: b, email: e1 }] });
    expect(clash.status).toBe(400);
    expect(clash.body.error.message).toContain(`already exists in record ${a}`);
    // Setting a record's value to itself is no clash.
    expect((await fx.api('PATCH', people(), { records: [{ id: a, email: e1 }] })).status).toBe(200);
    const swap = await fx.api('PATCH', people(), { records: [{ id: a, email: e2 }, { id: b, email: e1 }] });
    expect(swap.status, JSON.stringify(swap.body)).toBe(200);
    expect((await valuesOf(fx, 'people', a)).email).toBe(e2);
    // Two records of the batch ending with one value clash.
    const same = unique();
    const both = await fx.api('PATCH', people(), { records: [{ id: a, email: same }, { id: b, email: same }] });
    expect(both.status).toBe(400);
    // A batch record keeping a value another batch record takes clashes too.
    const keep = await fx.api('PATCH', people(), { records: [{ id: a, name: 'keeps e2' }, { id: b, email: e2 }] });
    expect(keep.status).toBe(400);
  });

  it('clearing a required field in a batch updates no record', async () => {
    const [a, b] = (await createPeople([{ name: 'a' }, { name: 'b' }])).body.data.ids;
    const before = await state();
    const res = await fx.api('PATCH', people(), { records: [{ id: a, name: 'changed', score: 3 }, { id: b, name: null }] });
    expect(res.status).toBe(400);
    expect(await state()).toEqual(before);
  });
});

describe('delete', () => {
  // Deleting by number or string id, deletedIds as strings, a missing id (404), an empty array:
  // records.delete; ids that are no ids: records.invalid-id-400; a record of another table:
  // records.other-table-404 of the conformance suite.
  it('names the missing id and the place of a bad id; 0 and a repeated id are 400; nothing is deleted', async () => {
    const [a] = (await createPeople([{ name: 'a' }])).body.data.ids;
    const before = await state();
    const missing = await fx.api('DELETE', people(), { records: [a, 987654321] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('987654321');
    for (const id of ['x', 0, 2.5, null, {}]) {
      const res = await fx.api('DELETE', people(), { records: [a, id] });
      expect(res.status, JSON.stringify(id)).toBe(400);
      expect(res.body.error.message).toContain('body.records[1]');
    }
    const twice = await fx.api('DELETE', people(), { records: [a, String(a)] });
    expect(twice.status).toBe(400);
    expect(await state()).toEqual(before);
  });
});

describe('option ids and names', () => {
  it('an option id wins over another option named like it', async () => {
    await fx.ws.createTable(MODULE, 'opts', {}, [field('c', 'choice', { options: [{ name: 'first' }] })]);
    const table = await fx.ws.getTable(MODULE, 'opts');
    const firstId: string = table.fields[0].options[0].id;
    // A second option named like the first one's id.
    await fx.ws.patchField(MODULE, 'opts', 'c', { options: [{ id: firstId, name: 'first' }, { name: firstId }] });
    const ids = await fx.ws.createRecords(MODULE, 'opts', [{ c: firstId }]);
    expect((await valuesOf(fx, 'opts', ids[0]!)).c).toBe(firstId);
  });
});
