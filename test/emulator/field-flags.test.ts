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
