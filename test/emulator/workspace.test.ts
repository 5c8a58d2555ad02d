import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/api/index.ts';
import { apiOf, call, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, makeModule, makeTable } from '../helpers/schema.ts';

describe('GET workspace', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
  });
  afterAll(() => emu.close());

  it('is an empty workspace named "Demo workspace" at first', async () => {
    const res = await api('GET', '');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { name: 'Demo workspace', modules: [] } });
  });

  it('holds every module with its tables and their fields, in creation order', async () => {
    await makeModule(emu, 'crm', { labels: { '': 'CRM' }, openRoles: ['admin', 'user'], isHidden: true });
    await makeModule(emu, 'ops');
    await makeTable(emu, 'crm', 'companies', { hasHistory: true }, [field('name', 'string'), field('size', 'number')]);
    await makeTable(emu, 'crm', 'contacts', {}, [
      field('full_name', 'string'),
      field('company', 'reference', { refTableName: 'companies' }),
    ]);
    await makeTable(emu, 'ops', 'tasks');

    const res = await api('GET', '');
    expect(res.status).toBe(200);
    expect(endpoints.getWorkspace.response.safeParse(res.body).success).toBe(true);
    const ws = res.body.data;
    expect(ws.modules.map((m: any) => m.name)).toEqual(['crm', 'ops']);
    const crm = ws.modules[0];
    expect(crm).toMatchObject({
      id: expect.stringMatching(/^m[0-9]+$/),
      name: 'crm',
      labels: { '': 'CRM' },
      icon: { icon: expect.any(String), color: expect.stringMatching(/^#[0-9a-f]{6}$/), filling: expect.any(Number) },
      isHidden: true,
      hideNavigation: false,
      openRoles: ['admin', 'editor'],
    });
    expect(crm.tables.map((t: any) => t.name)).toEqual(['companies', 'contacts']);
    const [companies, contacts] = crm.tables;
    expect(companies.id).toMatch(/^t[0-9]+$/);
    expect(companies.hasHistory).toBe(true);
    expect(companies.fields.map((f: any) => [f.name, f.type])).toEqual([['name', 'string'], ['size', 'number']]);
    expect(companies.fields[0].id).toMatch(/^f[0-9]+$/);
    expect(contacts.fields[1]).toMatchObject({ name: 'company', type: 'reference', refTableId: companies.id });
    expect(ws.modules[1].tables).toEqual([expect.objectContaining({ name: 'tasks', fields: [] })]);
  });

  it('agrees with the tables and fields endpoints', async () => {
    const ws = (await api('GET', '')).body.data;
    const tables = (await api('GET', 'modules/crm/tables')).body.data;
    expect(tables).toEqual(ws.modules[0].tables);
    const fields = (await api('GET', 'modules/crm/tables/contacts/fields')).body.data;
    expect(fields).toEqual(ws.modules[0].tables[1].fields);
  });

  it('answers 404 for another workspace id and 400 for a malformed one', async () => {
    const other = await call(emu.url, 'GET', '/api/v1/workspace/other0000001', { token: emu.apiKey });
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain('other0000001');
    for (const bad of ['short', 'UPPERCASE000', 'toolong0000001']) {
      const res = await call(emu.url, 'GET', `/api/v1/workspace/${bad}`, { token: emu.apiKey });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.message).toContain('path.workspaceId');
    }
  });

  it('takes no query parameters', async () => {
    const res = await api('GET', '?x=1');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('query');
  });
});

describe('workspace name', () => {
  it('comes from the workspaceName option', async () => {
    const emu = await startEmulator({ workspaceName: 'Acme HQ' });
    try {
      expect((await apiOf(emu)('GET', '')).body.data.name).toBe('Acme HQ');
    } finally {
      await emu.close();
    }
  });

  it("comes from the seed's name, and the option wins over it", async () => {
    const seeded = await startEmulator({ seed: { name: 'Seeded', modules: [] } });
    const both = await startEmulator({ seed: { name: 'Seeded' }, workspaceName: 'Option' });
    try {
      expect((await apiOf(seeded)('GET', '')).body.data.name).toBe('Seeded');
      expect((await apiOf(both)('GET', '')).body.data.name).toBe('Option');
    } finally {
      await seeded.close();
      await both.close();
    }
  });
});
