import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, fieldsPath, makeModule, makeTable, ok, recordsPath, tablePath } from '../helpers/schema.ts';

// Role lists on records requests: the module's openRoles, the table's read/create/write/delete
// roles, and the fields' readRoles/writeRoles, for a key acting as editor.

describe('roles on records', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = recordsPath('crm', 'deals');
  let ids: string[];

  beforeAll(async () => {
    emu = await startEmulator({
      apiKeys: [
        { key: 'test-key', grants: 'all' },
        { key: 'editor', grants: [] },
        { key: 'user', grants: ['role:user'] },
        { key: 'admin-role', grants: ['role:admin'] },
      ],
    });
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeModule(emu, 'vault', { openRoles: ['admin'] });
    await makeTable(emu, 'vault', 'keys', {}, [field('k', 'string')]);
    await makeTable(emu, 'crm', 'secrets', {}, [field('s', 'string')]);
    ok(await api('PATCH', tablePath('crm', 'secrets'), { readRoles: ['admin'] }));
    await makeTable(emu, 'crm', 'deals', { hasHistory: true }, [
      field('title', 'string'),
      field('margin', 'number', { readRoles: ['admin'] }),
      field('stage', 'string', { writeRoles: ['admin'] }),
    ]);
    ok(await api('PATCH', tablePath('crm', 'deals'), {
      readRoles: ['admin', 'editor'], createRoles: ['admin'], writeRoles: ['editor'], deleteRoles: ['admin'],
    }));
    ids = ok(await api('POST', path, { records: [{ title: 'a', margin: 10, stage: 'new' }, { title: 'b', margin: 20 }] })).body.data.ids;
  });
  afterAll(() => emu.close());

  it('a key with every grant, or the grant role:admin, acts as admin and passes every list', async () => {
    expect((await api('GET', path)).body.data.map((r: any) => r.values.margin)).toEqual([10, 20]);
    expect((await api('GET', recordsPath('vault', 'keys'), undefined, 'admin-role')).status).toBe(200);
    expect((await api('DELETE', path, { records: [ids[1]] }, 'admin-role')).status).toBe(200);
  });

  it('the module openRoles: a role it lacks gets 403 on every records request', async () => {
    const res = await api('GET', recordsPath('vault', 'keys'), undefined, 'editor');
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('role editor may not open module vault (openRoles: admin)');
    expect((await api('POST', recordsPath('vault', 'keys'), { records: [{}] }, 'user')).status).toBe(403);
  });

  it('the table lists: read (list and changes), create, write, delete', async () => {
    const secrets = await api('GET', recordsPath('crm', 'secrets'), undefined, 'editor');
    expect(secrets.status).toBe(403);
    expect(secrets.body.error.message).toBe('role editor may not read records of table crm.secrets (readRoles: admin)');
    expect((await api('GET', `${path}/changes?since=2000-01-01T00:00Z`, undefined, 'editor')).status).toBe(200);
    const create = await api('POST', path, { records: [{ title: 'v' }] }, 'user');
    expect(create.status).toBe(403);
    expect(create.body.error.message).toBe('role editor may not create records of table crm.deals (createRoles: admin)');
    expect((await api('PATCH', path, { records: [{ id: ids[0], title: 'e' }] }, 'editor')).status).toBe(200);
    const del = await api('DELETE', path, { records: [ids[0]] }, 'editor');
    expect(del.status).toBe(403);
    expect(del.body.error.message).toContain('deleteRoles: admin');
  });

  it('field readRoles hide the value (also from filters); writeRoles refuse writes of the field', async () => {
    const rows = (await api('GET', path, undefined, 'editor')).body.data;
    expect(rows[0].values).toEqual({ title: 'e', margin: null, stage: 'new' });
    const filtered = await api('GET', `${path}?filter=${encodeURIComponent(JSON.stringify({ margin: 10 }))}`, undefined, 'editor');
    expect(filtered.body.data).toEqual([]);
    const write = await api('PATCH', path, { records: [{ id: ids[0], title: 'x', stage: 'won' }] }, 'editor');
    expect(write.status).toBe(403);
    expect(write.body.error.message).toBe('body.records[0].stage: role editor may not write field stage (writeRoles: admin)');
    expect((await api('GET', path)).body.data[0].values).toMatchObject({ title: 'e', stage: 'new' });
  });

  it('a key without the grant cannot open a table to its own role: the role lists need schema:manage-permissions', async () => {
    const res = await api('PATCH', tablePath('crm', 'secrets'), { readRoles: ['admin', 'editor'] }, 'editor');
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('body.readRoles: setting readRoles needs the grant schema:manage-permissions');
    expect((await api('GET', recordsPath('crm', 'secrets'), undefined, 'editor')).status).toBe(403);
  });

  it('roles changed by a PATCH apply to the next request', async () => {
    ok(await api('PATCH', tablePath('crm', 'deals'), { readRoles: ['admin'] }));
    expect((await api('GET', path, undefined, 'editor')).status).toBe(403);
    ok(await api('PATCH', tablePath('crm', 'deals'), { readRoles: ['admin', 'editor'] }));
    ok(await api('PATCH', `${fieldsPath('crm', 'deals')}/margin`, { readRoles: ['admin', 'editor'] }));
    expect((await api('GET', path, undefined, 'editor')).body.data[0].values.margin).toBe(10);
  });
});

describe('a unique value the caller cannot read', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  let ids: Record<string, string>;
  const path = (table: string) => recordsPath('crm', table);

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'editor', grants: [] }] });
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [
      field('name', 'string'),
      field('email', 'string', { unique: true, readRoles: ['admin'] }),
      field('phone', 'string', { unique: true }),
    ]);
    ok(await api('PATCH', `${fieldsPath('crm', 'people')}/phone`, { canRead: 'name != "hidden"' }));
    await makeTable(emu, 'crm', 'closed', {}, [field('code', 'string', { unique: true })]);
    ok(await api('PATCH', tablePath('crm', 'closed'), { readRoles: ['admin'] }));
    ids = {
      people: ok(await api('POST', path('people'), { records: [{ name: 'hidden', email: 'a@x', phone: '1' }, { name: 'open', phone: '2' }] })).body.data.ids,
      closed: ok(await api('POST', path('closed'), { records: [{ code: 'c1' }] })).body.data.ids,
    } as any;
  });
  afterAll(() => emu.close());

  it('is still refused, without naming the record that holds it', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['people', { email: 'a@x' }, 'email'], // readRoles leave editor out
      ['people', { phone: '1' }, 'phone'], // canRead hides it in that record
      ['closed', { code: 'c1' }, 'code'], // the table's readRoles leave editor out
    ];
    for (const [table, record, name] of cases) {
      const res = await api('POST', path(table), { records: [record] }, 'editor');
      expect(res.status, name).toBe(400);
      expect(res.body.error.message).toBe(`body.records[0].${name}: this value of unique field ${name} already exists in another record`);
    }
  });

  it('names the record when the caller reads that field of it, or acts as admin', async () => {
    const open = await api('POST', path('people'), { records: [{ phone: '2' }] }, 'editor');
    expect(open.body.error.message).toBe(`body.records[0].phone: value "2" of unique field phone already exists in record ${ids.people![1]}`);
    const admin = await api('POST', path('people'), { records: [{ email: 'a@x' }] });
    expect(admin.body.error.message).toBe(`body.records[0].email: value "a@x" of unique field email already exists in record ${ids.people![0]}`);
  });

  it('a clash with another record of the same request holding the value unread is told so too', async () => {
    const [hidden, other] = ids.people as unknown as string[];
    // Record 0 holds phone "1", which canRead hides from everyone while its name is "hidden".
    const clash = await api('PATCH', path('people'), { records: [{ id: hidden }, { id: other, phone: '1' }] }, 'editor');
    expect(clash.status).toBe(400);
    expect(clash.body.error.message).toBe('body.records[1].phone: this value of unique field phone already exists in another record');
  });
});
