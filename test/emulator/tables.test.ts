import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, listen } from '../../src/emulator/index.ts';
import { endpoints } from '../../src/api/index.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { changesAfter, field, fieldsPath, makeModule, makeTable, openPoll, tablePath, tablesPath } from '../helpers/schema.ts';

describe('tables', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeModule(emu, 'ops');
  });
  afterAll(() => emu.close());

  describe('list', () => {
    it('answers 404 for an unknown module and [] for an empty one', async () => {
      const missing = await api('GET', tablesPath('nope'));
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toContain('module nope');
      expect((await api('GET', tablesPath('ops'))).body).toEqual({ data: [] });
    });
  });

  describe('create', () => {
    it('answers 201 with the table, every omitted property at its documented default', async () => {
      const res = await api('POST', tablesPath('crm'), { name: 'companies' });
      expect(res.status).toBe(201);
      expect(endpoints.createTable.response.safeParse(res.body).success).toBe(true);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^t[0-9]+$/),
        name: 'companies',
        labels: {},
        icon: { color: '#1e88e5', filling: 0, icon: 'table' },
        hasFiles: false,
        hasGlobalSearch: false,
        hasHistory: false,
        isEmailLinkingEnabled: false,
        isHidden: false,
        createRoles: ['admin', 'editor'],
        deleteRoles: ['admin', 'editor'],
        readRoles: ['admin', 'editor'],
        writeRoles: ['admin', 'editor'],
        fields: [],
      });
    });

    // Every given property kept, GET answering the same: tables.create of the conformance suite.
    it('completes a partial icon from the default icon', async () => {
      const res = await api('POST', tablesPath('crm'), { name: 'contacts', icon: { icon: 'person', color: '#123456' } });
      expect(res.status).toBe(201);
      expect(res.body.data.icon).toEqual({ icon: 'person', color: '#123456', filling: 0 });
    });

    it('answers 400 when the table exists in the module, but allows the name in another module', async () => {
      const dup = await api('POST', tablesPath('crm'), { name: 'companies' });
      expect(dup.status).toBe(400);
      expect(dup.body.error.message).toMatch(/companies already exists/);
      expect((await api('POST', tablesPath('ops'), { name: 'companies' })).status).toBe(201);
    });

    it('answers 404 for an unknown module', async () => {
      const res = await api('POST', tablesPath('nope'), { name: 'x' });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain('module nope');
    });

    it.each([
      [{}, 'body.name'],
      [{ name: 'Bad-Name' }, 'body.name'],
      [{ name: 'a'.repeat(101) }, 'body.name'],
      [{ name: 'x', hasHistory: 'yes' }, 'body.hasHistory'],
      [{ name: 'x', createRoles: ['admin'] }, 'createRoles'],
      [{ name: 'x', icon: { color: 'red' } }, 'body.icon.color'],
      [{ name: 'x', fields: [] }, 'fields'],
    ])('answers 400 for %j naming %s', async (body, where) => {
      const res = await api('POST', tablesPath('crm'), body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(where);
    });
  });

  describe('get', () => {
    // 404 for an unknown table or module: tables.get.unknown-404 of the conformance suite.
    it('returns the table with its fields in creation order; the 404 names the table', async () => {
      await api('POST', `${fieldsPath('crm', 'companies')}/batch`, [field('name', 'string'), field('size', 'number')]);
      const res = await api('GET', tablePath('crm', 'companies'));
      expect(res.status).toBe(200);
      expect(res.body.data.fields.map((f: any) => f.name)).toEqual(['name', 'size']);
      const missing = await api('GET', tablePath('crm', 'nope'));
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toContain('crm.nope');
    });
  });

  describe('patch', () => {
    // Renames, flags and 404s are rules of the API: src/conformance/checks/tables.ts.
    beforeAll(async () => {
      await makeTable(emu, 'ops', 'tasks');
    });

    it('answers 400 when renaming onto an existing table', async () => {
      const res = await api('PATCH', tablePath('ops', 'tasks'), { name: 'companies' });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/companies already exists/);
      expect((await api('GET', tablePath('ops', 'tasks'))).status).toBe(200);
    });

    it('sets roles (user is stored as its alias editor), replaces labels, merges the icon', async () => {
      const res = await api('PATCH', tablePath('ops', 'tasks'), {
        createRoles: ['admin'], deleteRoles: ['admin', 'user', 'editor'], readRoles: ['user'], writeRoles: [],
        labels: { '': 'Tasks' }, icon: { color: '#abcdef' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        createRoles: ['admin'], deleteRoles: ['admin', 'editor'], readRoles: ['editor'], writeRoles: [],
        labels: { '': 'Tasks' }, icon: { color: '#abcdef', icon: 'table', filling: 0 },
      });
      const again = await api('PATCH', tablePath('ops', 'tasks'), { labels: { de: 'Aufgaben' } });
      expect(again.body.data.labels).toEqual({ de: 'Aufgaben' });
    });

    it('answers 400 for unknown roles and properties, 404 for an unknown table', async () => {
      expect((await api('PATCH', tablePath('ops', 'tasks'), { readRoles: ['owner'] })).status).toBe(400);
      expect((await api('PATCH', tablePath('ops', 'tasks'), { fields: [] })).status).toBe(400);
      expect((await api('PATCH', tablePath('ops', 'nope'), { isHidden: true })).status).toBe(404);
    });

    it('an empty patch changes nothing and logs no schema change', async () => {
      const poll = await openPoll(emu);
      const res = await api('PATCH', tablePath('ops', 'tasks'), {});
      expect(res.status).toBe(200);
      const after = await changesAfter(emu, poll);
      expect(after).toEqual([]);
    });
  });

  describe('delete', () => {
    // The answer, the 404s after it and a new table of the same name: tables.delete of the conformance suite.
    it('logs Table and Field deleted changes', async () => {
      const table = await makeTable(emu, 'ops', 'gone', {}, [field('x', 'string')]);
      const poll = await openPoll(emu);
      const fieldId = (await api('GET', tablePath('ops', 'gone'))).body.data.fields[0].id;
      await api('DELETE', tablePath('ops', 'gone'));
      const changes = await changesAfter(emu, poll);
      expect(changes.map((c: any) => [c.kind, c.id, c.action])).toEqual([
        ['Field', fieldId, 'deleted'],
        ['Table', table.id, 'deleted'],
      ]);
    });
  });
});

describe('table delete removes records and their change log', () => {
  it('leaves no record and no record change of the table behind', async () => {
    const app = await buildServer({
      apiKeys: [{ key: 'k', grants: 'all' }],
      seed: {
        modules: [{
          name: 'crm',
          tables: [
            { name: 'people', hasHistory: true, fields: [field('name', 'string')], records: [{ name: 'a' }, { name: 'b' }] },
            { name: 'kept', hasHistory: true, fields: [field('name', 'string')], records: [{ name: 'c' }] },
          ],
        }],
      },
    });
    try {
      const url = await listen(app, { port: 0 });
      const db = app.emulator.db;
      const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      expect(count('SELECT COUNT(*) AS n FROM records WHERE table_id = 1')).toBe(2);
      expect(count('SELECT COUNT(*) AS n FROM record_changes WHERE table_id = 1')).toBe(2);
      const res = await fetch(`${url}/api/v1/workspace/demo00000001/modules/crm/tables/people`, {
        method: 'DELETE', headers: { authorization: 'Bearer k' },
      });
      expect(res.status).toBe(200);
      expect(count('SELECT COUNT(*) AS n FROM records WHERE table_id = 1')).toBe(0);
      expect(count('SELECT COUNT(*) AS n FROM record_changes WHERE table_id = 1')).toBe(0);
      expect(count('SELECT COUNT(*) AS n FROM records WHERE table_id = 2')).toBe(1);
      expect(count('SELECT COUNT(*) AS n FROM record_changes WHERE table_id = 2')).toBe(1);
    } finally {
      await app.close();
    }
  });
});
