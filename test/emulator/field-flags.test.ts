import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, fieldsPath, makeModule, makeTable, ok, recordsPath, snapshot } from '../helpers/schema.ts';

// A field that becomes unique or required must hold for the records already there.

describe('making a field unique or required', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const patch = (name: string, body: unknown) => api('PATCH', `${fieldsPath('crm', 'people')}/${name}`, body);
  let ids: string[];

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [
      field('email', 'string'), field('nick', 'string'), field('age', 'number'), field('vip', 'boolean'),
      field('tags', 'multi', { options: [{ name: 'a' }, { name: 'b' }] }),
    ]);
    ids = ok(await api('POST', recordsPath('crm', 'people'), { records: [
      { email: 'x@a', nick: 'ann', age: 3, vip: true, tags: ['a'] },
      { email: 'y@a', nick: '', age: 3, vip: true, tags: [] },
      { email: 'x@a', age: 4, vip: false, tags: ['a'] },
      { email: 'z@a', nick: 'zed', age: 5, tags: [] },
    ] })).body.data.ids;
  });
  afterAll(() => emu.close());

  it('unique: 400 naming the repeated value and its records, and nothing changes', async () => {
    const before = await snapshot(emu);
    const res = await patch('email', { unique: true });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`body.unique: field email cannot become unique: value "x@a" repeats in records ${ids[0]}, ${ids[2]}`);
    expect((await patch('vip', { unique: true })).body.error.message).toContain('value 1 repeats');
    expect((await patch('tags', { unique: true })).body.error.message).toContain('value "[\\"o1\\"]" repeats');
    expect(await snapshot(emu)).toEqual(before);
  });

  it('unique: empty values may repeat; distinct values pass', async () => {
    ok(await api('PATCH', recordsPath('crm', 'people'), { records: [{ id: ids[2], email: 'w@a' }] }));
    expect((await patch('email', { unique: true })).status).toBe(200);
    expect((await patch('nick', { unique: true })).status).toBe(200);
  });

  it('required: 400 naming the records without a value (absent, null, "" or [])', async () => {
    const nick = await patch('nick', { required: true });
    expect(nick.status).toBe(400);
    expect(nick.body.error.message).toBe(`body.required: field nick cannot become required: records ${ids[1]}, ${ids[2]} have no value`);
    expect((await patch('tags', { required: true })).body.error.message).toContain(`records ${ids[1]}, ${ids[3]} have no value`);
    expect((await patch('age', { required: true })).status).toBe(200);
  });

  it('a batch with one such field changes nothing', async () => {
    const before = await snapshot(emu);
    const res = await api('PATCH', `${fieldsPath('crm', 'people')}/batch`, [{ fieldName: 'vip', index: true }, { fieldName: 'nick', required: true }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body[1].required');
    expect(await snapshot(emu)).toEqual(before);
  });
});

describe('making a field unique or required, as a role that cannot read its values', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  let ids: string[];

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'lim', grants: ['role:editor'] }] });
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('email', 'string', { readRoles: ['admin'] }), field('nick', 'string')]);
    ids = ok(await api('POST', recordsPath('crm', 'people'), { records: [
      { email: 'secret@a', nick: 'x' }, { email: 'other@a' }, { email: 'secret@a', nick: 'y' },
    ] })).body.data.ids;
  });
  afterAll(() => emu.close());

  it('is refused all the same, naming neither the hidden value nor the records holding it', async () => {
    const asEditor = (body: unknown) => api('PATCH', `${fieldsPath('crm', 'people')}/email`, body, 'lim');
    const unique = await asEditor({ unique: true });
    expect(unique.status).toBe(400);
    expect(unique.body.error.message).toBe('body.unique: field email cannot become unique: a value repeats in 2 records');
    // The admin is told which.
    const asAdmin = await api('PATCH', `${fieldsPath('crm', 'people')}/email`, { unique: true });
    expect(asAdmin.body.error.message).toContain(`value "secret@a" repeats in records ${ids[0]}, ${ids[2]}`);
  });
});

describe('a new field over existing records, and computed fields', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('crm', 'people');
  let ids: string[];

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'lim', grants: ['role:editor'] }] });
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('email', 'string'), field('total', 'function', { expression: 'length(email)' })]);
    await makeTable(emu, 'crm', 'empty');
    ids = ok(await api('POST', recordsPath('crm', 'people'), { records: [{ email: 'a@x' }, { email: 'b@x' }] })).body.data.ids;
  });
  afterAll(() => emu.close());

  it('a new required field on a table with records is 400, as making a field required is: none of them has a value', async () => {
    const before = await snapshot(emu);
    const res = await api('POST', path, field('nick', 'string', { required: true, defaultValue: 'x' }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`body.required: field nick cannot be required: records ${ids[0]}, ${ids[1]} would have no value`);
    const batch = await api('POST', `${path}/batch`, [field('a', 'string'), field('b', 'number', { required: true })]);
    expect(batch.body.error.message).toMatch(/^body\[1\]\.required: field b cannot be required/);
    expect(await snapshot(emu)).toEqual(before);
    // A role that cannot read the table's records is not told which.
    ok(await api('PATCH', 'modules/crm/tables/people', { readRoles: ['admin'] }));
    const hidden = await api('POST', path, field('nick', 'string', { required: true }), 'lim');
    expect(hidden.body.error.message).toBe('body.required: field nick cannot be required: the table has records, which would have no value');
    ok(await api('PATCH', 'modules/crm/tables/people', { readRoles: ['admin', 'editor'] }));
    // unique holds at once (empty values may repeat), and an empty table takes required.
    expect((await api('POST', path, field('code', 'string', { unique: true }))).status).toBe(201);
    expect((await api('POST', fieldsPath('crm', 'empty'), field('nick', 'string', { required: true }))).status).toBe(201);
  });

  it('required and unique are refused on computed fields (function, reverse), on create and on update; false is accepted', async () => {
    const before = await snapshot(emu);
    for (const [flag, body] of [
      ['required', field('f', 'function', { expression: '1', required: true })],
      ['unique', field('f', 'function', { expression: '1', unique: true })],
      ['required', field('r', 'reverse', { refTableName: 'empty', required: true })],
      ['unique', field('r', 'reverse', { refTableName: 'empty', unique: true })],
    ] as const) {
      const res = await api('POST', fieldsPath('crm', 'empty'), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toBe(`body.${flag}: ${flag} is not accepted for ${body.type} fields: their values are computed, never written`);
    }
    for (const flag of ['required', 'unique']) {
      const res = await api('PATCH', `${path}/total`, { [flag]: true });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`body.${flag}: ${flag} is not accepted for function fields: their values are computed, never written`);
    }
    expect(await snapshot(emu)).toEqual(before);
    expect((await api('PATCH', `${path}/total`, { required: false, unique: false })).status).toBe(200);
    expect((await api('POST', fieldsPath('crm', 'empty'), field('f', 'function', { expression: '1', required: false, unique: false }))).status).toBe(201);
  });
});
