import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postCsv } from '../helpers/csv-upload.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, makeModule, makeTable, ok, recordsPath, tablePath } from '../helpers/schema.ts';

// A CSV import is a records request: the module's openRoles and the table's role lists apply to
// it as to a create (append, upsert) and an update (update, upsert), for a key acting as editor.

describe('roles on CSV import', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const keyed = JSON.stringify([{ csvColumnName: 'name', fieldName: 'name', updatePolicy: 'key' }, { csvColumnName: 'n', fieldName: 'n' }]);
  const names = async (module: string, table: string) =>
    (await api('GET', recordsPath(module, table))).body.data.map((r: any) => r.values);

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'lim', grants: ['role:editor'] }] });
    api = apiOf(emu);
    await makeModule(emu, 'sec', { openRoles: ['admin'] });
    await makeTable(emu, 'sec', 's1', {}, [field('name', 'string'), field('n', 'number')]);
    ok(await api('POST', recordsPath('sec', 's1'), { records: [{ name: 'a', n: 1 }] }));
    await makeModule(emu, 'crm');
    for (const [table, roles] of [
      ['hidden', { readRoles: ['admin'] }],
      ['nocreate', { createRoles: ['admin'] }],
      ['nowrite', { writeRoles: ['admin'] }],
    ] as const) {
      await makeTable(emu, 'crm', table, {}, [field('name', 'string'), field('n', 'number')]);
      ok(await api('PATCH', tablePath('crm', table), roles));
      ok(await api('POST', recordsPath('crm', table), { records: [{ name: 'a', n: 1 }] }));
    }
  });
  afterAll(() => emu.close());

  it('the module openRoles: a role it lacks gets 403 in every mode, and nothing changes', async () => {
    expect((await api('GET', recordsPath('sec', 's1'), undefined, 'lim')).status).toBe(403);
    for (const importMode of ['append', 'update', 'upsert']) {
      const res = await postCsv(emu, 'sec', 's1', 'name,n\nb,2\na,5\n', { importMode, mappings: keyed }, 'lim');
      expect(res.status, importMode).toBe(403);
      expect(res.body.error.message).toBe('role editor may not open module sec (openRoles: admin)');
    }
    expect(await names('sec', 's1')).toEqual([{ name: 'a', n: 1 }]);
  });

  it('the table readRoles: update and upsert are refused, so the counts tell nothing of the keys', async () => {
    for (const importMode of ['update', 'upsert']) {
      const res = await postCsv(emu, 'crm', 'hidden', 'name,n\na,5\nzz,6\n', { importMode, mappings: keyed }, 'lim');
      expect(res.status, importMode).toBe(403);
      expect(res.body.error.message).toBe('role editor may not read records of table crm.hidden (readRoles: admin)');
    }
    // Append reveals nothing and creates, as a records create may.
    expect((await postCsv(emu, 'crm', 'hidden', 'name,n\nb,2\n', {}, 'lim')).body.data).toEqual({ rowsImported: 1, rowsUpdated: 0, rowsSkipped: 0 });
  });

  it('the table createRoles refuse append and upsert; update may still write', async () => {
    for (const importMode of ['append', 'upsert']) {
      const res = await postCsv(emu, 'crm', 'nocreate', 'name,n\na,5\n', { importMode, mappings: keyed }, 'lim');
      expect(res.status, importMode).toBe(403);
      expect(res.body.error.message).toBe('role editor may not create records of table crm.nocreate (createRoles: admin)');
    }
    const update = await postCsv(emu, 'crm', 'nocreate', 'name,n\na,5\n', { importMode: 'update', mappings: keyed }, 'lim');
    expect(update.body.data).toEqual({ rowsImported: 0, rowsUpdated: 1, rowsSkipped: 0 });
  });

  it('the table writeRoles refuse update and upsert; append may still create', async () => {
    for (const importMode of ['update', 'upsert']) {
      const res = await postCsv(emu, 'crm', 'nowrite', 'name,n\na,5\n', { importMode, mappings: keyed }, 'lim');
      expect(res.status, importMode).toBe(403);
      expect(res.body.error.message).toBe('role editor may not write records of table crm.nowrite (writeRoles: admin)');
    }
    expect(await names('crm', 'nowrite')).toEqual([{ name: 'a', n: 1 }]);
    expect((await postCsv(emu, 'crm', 'nowrite', 'name,n\nb,2\n', {}, 'lim')).status).toBe(200);
  });

  it('a key column the role cannot read tells nothing of the stored values', async () => {
    await makeTable(emu, 'crm', 'people', {}, [
      field('name', 'string'), field('n', 'number'), field('email', 'string', { readRoles: ['admin'] }), field('code', 'string'),
    ]);
    ok(await api('PATCH', `modules/crm/tables/people/fields/code`, { canRead: 'name != "hidden"' }));
    ok(await api('POST', recordsPath('crm', 'people'), { records: [{ name: 'hidden', email: 'a@x', code: 'c1' }, { name: 'open', code: 'c2' }] }));
    const byEmail = JSON.stringify([{ csvColumnName: 'email', fieldName: 'email', updatePolicy: 'key' }, { csvColumnName: 'n', fieldName: 'n' }]);
    const res = await postCsv(emu, 'crm', 'people', 'email,n\na@x,5\n', { importMode: 'update', mappings: byEmail }, 'lim');
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('form.mappings[0]: role editor may not read field email (readRoles: admin), so it cannot be a key');
    // A read guard hides the value in some records: those match no key, as a filter on it would not match them.
    const byCode = JSON.stringify([{ csvColumnName: 'code', fieldName: 'code', updatePolicy: 'key' }, { csvColumnName: 'n', fieldName: 'n' }]);
    const guarded = await postCsv(emu, 'crm', 'people', 'code,n\nc1,5\nc2,6\n', { importMode: 'update', mappings: byCode }, 'lim');
    expect(guarded.body.data).toEqual({ rowsImported: 0, rowsUpdated: 1, rowsSkipped: 1 });
    expect((await api('GET', recordsPath('crm', 'people'))).body.data.map((r: any) => r.values.n)).toEqual([null, 6]);
  });

  it('a refused key is told 403 before its file is read', async () => {
    // No file part at all: a key that may import would be told 400 for it.
    const res = await postCsv(emu, 'sec', 's1', undefined, {}, 'lim');
    expect(res.status).toBe(403);
    expect((await postCsv(emu, 'sec', 's1', undefined, {})).status).toBe(400);
  });
});
