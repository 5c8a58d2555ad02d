import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/api/index.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { changesAfter, field, fieldsPath, makeModule, makeTable, openPoll, snapshot } from '../helpers/schema.ts';

describe('field batches are all-or-nothing', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('crm', 'things');

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'things', {}, [
      field('a', 'string'), field('b', 'number'), field('c', 'choice', { options: [{ name: 'x' }] }),
    ]);
  });
  afterAll(() => emu.close());

  /** Runs a request that must fail and checks that nothing observable changed. */
  async function failsUnchanged(method: string, url: string, body: unknown, status: number, text: string) {
    const before = await snapshot(emu);
    const res = await api(method, url, body);
    expect(res.status).toBe(status);
    expect(res.body.error.message).toContain(text);
    expect(await snapshot(emu)).toEqual(before);
  }

  describe('batch create', () => {
    it('creates every field in order: 201 with the fields', async () => {
      const res = await api('POST', `${path}/batch`, [field('d', 'string'), field('e', 'multi', { options: [{ name: 'p' }] })]);
      expect(res.status).toBe(201);
      expect(endpoints.createFields.response.safeParse(res.body).success).toBe(true);
      expect(res.body.data.map((f: any) => f.name)).toEqual(['d', 'e']);
      expect((await api('GET', path)).body.data.map((f: any) => f.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it.each([
      ['a duplicate name in the batch', [field('f1', 'string'), field('f1', 'number')], 400, 'body[1].name'],
      ['a field that exists', [field('f1', 'string'), field('a', 'string')], 400, 'body[1].name'],
      ['an uncompilable guard', [field('f1', 'string'), field('f2', 'string', { canRead: '(' })], 400, 'body[1].canRead'],
      ['a guard on a field of the same batch', [field('f1', 'string'), field('f2', 'string', { canRead: 'f1 = 1' })], 400, 'body[1].canRead'],
      ['an unknown refTableName', [field('f1', 'string'), field('f2', 'reference', { refTableName: 'zz' })], 400, 'body[1].refTableName'],
      ['a bad default', [field('f1', 'choice', { options: [{ name: 'q' }] }), field('f2', 'number', { defaultValue: 'x' })], 400, 'body[1].defaultValue'],
      ['an internal type', [field('f1', 'string'), field('f2', 'rowId')], 400, 'body[1].type'],
      ['canWrite on a function', [field('f1', 'string'), field('f2', 'function', { expression: '1', canWrite: 'true' })], 400, 'body[1].canWrite'],
      ['an empty batch', [], 400, 'at least 1'],
    ])('creates none on %s', async (_what, body, status, text) => {
      await failsUnchanged('POST', `${path}/batch`, body, status, text);
    });

    it('answers 404 for an unknown table and changes nothing', async () => {
      await failsUnchanged('POST', `${fieldsPath('crm', 'nope')}/batch`, [field('f1', 'string')], 404, 'crm.nope');
    });

    it('uses no option ids on a failed batch', async () => {
      const failed = await api('POST', `${path}/batch`, [field('g1', 'choice', { options: [{ name: 'q' }] }), field('a', 'string')]);
      expect(failed.status).toBe(400);
      const before = (await api('GET', `${path}/e`)).body.data.options[0].id;
      const res = await api('POST', `${path}/batch`, [field('g1', 'choice', { options: [{ name: 'q' }] })]);
      expect(res.body.data[0].options[0].id).toBe(`o${Number(before.slice(1)) + 1}`);
    });
  });

  describe('batch update', () => {
    it('updates every field: 200 with the fields in request order', async () => {
      const res = await api('PATCH', `${path}/batch`, [{ fieldName: 'b', required: true }, { fieldName: 'a', name: 'a2' }]);
      expect(res.status).toBe(200);
      expect(endpoints.updateFields.response.safeParse(res.body).success).toBe(true);
      expect(res.body.data.map((f: any) => [f.name, f.required])).toEqual([['b', true], ['a2', false]]);
    });

    it('a rename may not take the current name of another field, even one renamed in the same batch', async () => {
      await failsUnchanged('PATCH', `${path}/batch`, [{ fieldName: 'a2', name: 'x1' }, { fieldName: 'b', name: 'a2' }], 400, 'body[1].name');
    });

    it.each([
      ['a duplicate fieldName', [{ fieldName: 'b', required: false }, { fieldName: 'b', index: true }], 400, 'body[1].fieldName'],
      ['a rename onto an existing field', [{ fieldName: 'b', required: false }, { fieldName: 'd', name: 'a2' }], 400, 'body[1].name'],
      ['two renames onto one name', [{ fieldName: 'b', name: 'z' }, { fieldName: 'd', name: 'z' }], 400, 'body[1].name'],
      ['a swap of names', [{ fieldName: 'b', name: 'd' }, { fieldName: 'd', name: 'b' }], 400, 'body[0].name'],
      ['an unknown field', [{ fieldName: 'b', required: false }, { fieldName: 'nope', required: true }], 404, 'body[1].fieldName'],
      ['a later invalid item', [{ fieldName: 'b', required: false, name: 'bb' }, { fieldName: 'c', options: 'sel' }], 400, 'body[1].options'],
      ['an uncompilable guard', [{ fieldName: 'b', required: false }, { fieldName: 'd', canRead: ')' }], 400, 'body[1].canRead'],
      ['an unknown option id', [{ fieldName: 'b', required: false }, { fieldName: 'c', options: [{ id: 'o999', name: 'x' }] }], 400, 'body[1].options[0].id'],
      ['a missing fieldName', [{ required: true }], 400, 'body[0].fieldName'],
      ['an empty batch', [], 400, 'at least 1'],
    ])('changes nothing on %s', async (_what, body, status, text) => {
      await failsUnchanged('PATCH', `${path}/batch`, body, status, text);
    });
  });

  describe('batch delete', () => {
    it('deletes every field: 200 with the deleted fields', async () => {
      await api('POST', `${path}/batch`, [field('del1', 'string'), field('del2', 'number')]);
      const res = await api('DELETE', `${path}/batch`, { fieldNames: ['del2', 'del1'] });
      expect(res.status).toBe(200);
      expect(endpoints.deleteFields.response.safeParse(res.body).success).toBe(true);
      expect(res.body.data.map((f: any) => [f.name, f.type])).toEqual([['del2', 'number'], ['del1', 'string']]);
      expect((await api('GET', `${path}/del1`)).status).toBe(404);
    });

    it.each([
      ['duplicates', { fieldNames: ['b', 'b'] }, 400, 'body.fieldNames[1]'],
      ['an unknown field', { fieldNames: ['b', 'nope'] }, 404, 'body.fieldNames[1]'],
      ['no names', { fieldNames: [] }, 400, 'at least 1'],
      ['a malformed name', { fieldNames: ['Bad'] }, 400, 'body.fieldNames[0]'],
      ['a bare array', ['b'], 400, 'body'],
    ])('deletes none on %s', async (_what, body, status, text) => {
      await failsUnchanged('DELETE', `${path}/batch`, body, status, text);
    });
  });

  describe('single delete', () => {
    it('answers 200 with the deleted field, logs Field deleted, then 404', async () => {
      const created = (await api('POST', path, field('solo', 'string'))).body.data;
      const poll = await openPoll(emu);
      const res = await api('DELETE', `${path}/solo`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(created);
      expect((await api('DELETE', `${path}/solo`)).status).toBe(404);
      expect(await changesAfter(emu, poll)).toEqual([
        { id: created.id, kind: 'Field', action: 'deleted', changedAt: expect.any(String) },
      ]);
    });
  });
});

describe('fields list paging', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('crm', 'wide');
  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    const fields = Array.from({ length: 120 }, (_, i) => field(`f${String(i).padStart(3, '0')}`, 'string'));
    await makeTable(emu, 'crm', 'wide', {}, fields);
  });
  afterAll(() => emu.close());

  it('defaults to limit 100, offset 0', async () => {
    const res = await api('GET', path);
    expect(res.status).toBe(200);
    expect(endpoints.listFields.response.safeParse(res.body).success).toBe(true);
    expect(res.body.data).toHaveLength(100);
    expect(res.body.page_info).toEqual({ has_more: true, limit: 100, offset: 0 });
  });

  it('pages with limit and offset in position order', async () => {
    const res = await api('GET', `${path}?limit=7&offset=110`);
    expect(res.body.data.map((f: any) => f.name)).toEqual(['f110', 'f111', 'f112', 'f113', 'f114', 'f115', 'f116']);
    expect(res.body.page_info).toEqual({ has_more: true, limit: 7, offset: 110 });
    const last = await api('GET', `${path}?limit=10&offset=110`);
    expect(last.body.page_info.has_more).toBe(false);
    expect((await api('GET', `${path}?offset=500`)).body).toEqual({ data: [], page_info: { has_more: false, limit: 100, offset: 500 } });
  });

  it('has no maximum limit', async () => {
    const res = await api('GET', `${path}?limit=1000`);
    expect(res.body.data).toHaveLength(120);
    expect(res.body.page_info).toEqual({ has_more: false, limit: 1000, offset: 0 });
  });

  it.each(['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x', 'limit=99999999999999999999', 'page=2'])(
    'answers 400 for %s', async (query) => {
      const res = await api('GET', `${path}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(new RegExp(`query[.:].*${query.split('=')[0]}`));
    },
  );

  // 404 for an unknown table: tables.delete of the conformance suite (the fields of a deleted table).
});
