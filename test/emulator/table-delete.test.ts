import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, changesAfter, field, fieldsPath, ok, openPoll, recordsPath, tablePath } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

// What deleting schema objects leaves behind: the per-table indexes of the emulator's SQLite
// store, and reference and reverse fields of other tables.

let emu: RunningEmulator;
let api: ReturnType<typeof apiOf>;
let ws: UpstreamWorkspace;
beforeAll(async () => {
  emu = await startEmulator();
  api = apiOf(emu);
  ws = new UpstreamWorkspace(emu);
});
beforeEach(async () => {
  ok(await adminOf(emu)('POST', 'reset'));
  await ws.createModule('crm');
});
afterAll(() => emu.close());

/** Names of the indexes the store made for one table (or for every table). */
function perTableIndexes(tableKey?: number): string[] {
  const rows = emu.db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'record*_t[0-9]*' ORDER BY name`)
    .all() as { name: string }[];
  const names = rows.map((r) => r.name);
  return tableKey === undefined ? names : names.filter((n) => new RegExp(`_t${tableKey}(?:_|$)`).test(n));
}

const keyOf = (table: { id: string }) => Number(table.id.slice(1));

/** A table with history and a unique field, whose records were written, listed and polled. */
async function usedTable(name: string): Promise<{ id: string; key: number }> {
  const table = await ws.createTable('crm', name, { hasHistory: true }, [field('code', 'string', { unique: true }), field('note', 'string')]);
  await ws.createRecords('crm', name, [{ code: 'a' }, { code: 'b' }]);
  await ws.allRecords('crm', name);
  ok(await api('GET', `${recordsPath('crm', name)}/changes?since=1970-01-01T00:00Z`));
  return { id: table.id, key: keyOf(table) };
}

describe('per-table indexes', () => {
  it('are dropped with their table, and a new table finds none of the old one', async () => {
    const old = await usedTable('people');
    const kept = await usedTable('kept');
    const codeId = (await ws.getTable('crm', 'people')).fields[0].id;
    expect(perTableIndexes(old.key)).toEqual([
      `record_changes_of_t${old.key}`, `records_of_t${old.key}`, `records_unique_t${old.key}_${codeId}`,
    ]);

    await ws.deleteTable('crm', 'people');
    expect(perTableIndexes(old.key)).toEqual([]);
    expect(perTableIndexes(kept.key)).toHaveLength(3);

    const again = await usedTable('people');
    expect(again.key).not.toBe(old.key);
    expect(perTableIndexes(old.key)).toEqual([]);
    expect(perTableIndexes(again.key)).toHaveLength(3);
  });

  it('are dropped with a deleted module', async () => {
    const a = await usedTable('a');
    const b = await usedTable('b');
    ok(await adminOf(emu)('DELETE', 'modules/crm'));
    expect(perTableIndexes(a.key)).toEqual([]);
    expect(perTableIndexes(b.key)).toEqual([]);
  });

  it('of a unique field go with the field, or when it stops being unique', async () => {
    const t = await usedTable('people');
    await ws.addFields('crm', 'people', [field('email', 'string', { unique: true })]);
    await ws.createRecords('crm', 'people', [{ code: 'c', email: 'c@example.com' }]);
    const fields = (await ws.getTable('crm', 'people')).fields as { id: string; name: string }[];
    const id = (name: string) => fields.find((f) => f.name === name)!.id;
    expect(perTableIndexes(t.key)).toContain(`records_unique_t${t.key}_${id('email')}`);

    ok(await api('DELETE', `${fieldsPath('crm', 'people')}/batch`, { fieldNames: ['email'] }));
    expect(perTableIndexes(t.key)).not.toContain(`records_unique_t${t.key}_${id('email')}`);
    expect(perTableIndexes(t.key)).toContain(`records_unique_t${t.key}_${id('code')}`);

    await ws.patchField('crm', 'people', 'code', { unique: false });
    expect(perTableIndexes(t.key)).toEqual([`record_changes_of_t${t.key}`, `records_of_t${t.key}`]);
    // Unique again: the check works, and its index comes back with the next write.
    await ws.patchField('crm', 'people', 'code', { unique: true });
    expect((await api('POST', recordsPath('crm', 'people'), { records: [{ code: 'a' }] })).status).toBe(400);
    await ws.createRecords('crm', 'people', [{ code: 'd' }]);
    expect(perTableIndexes(t.key)).toContain(`records_unique_t${t.key}_${id('code')}`);
  });

  it('are all dropped by a reset, which starts table keys at 1 again', async () => {
    const t = await usedTable('people');
    expect(t.key).toBe(1);
    ok(await adminOf(emu)('POST', 'reset'));
    expect(perTableIndexes()).toEqual([]);
    await ws.createModule('crm');
    const again = await ws.createTable('crm', 'other', { hasHistory: true }, [field('x', 'string')]);
    expect(keyOf(again)).toBe(1);
    await ws.createRecords('crm', 'other', [{ x: 'y' }]);
    expect(await ws.allRecords('crm', 'other')).toEqual([{ id: expect.any(String), values: { x: 'y' } }]);
    ok(await api('GET', `${recordsPath('crm', 'other')}/changes?since=1970-01-01T00:00Z`));
  });
});

describe('reference and reverse fields of other tables', () => {
  it('are deleted with the table they point at, each logged before the table', async () => {
    const companies = await ws.createTable('crm', 'companies', {}, [field('name', 'string')]);
    await ws.createTable('crm', 'deals', {}, [
      field('title', 'string'),
      field('company', 'reference', { refTableName: 'companies' }),
      field('also', 'reference', { refTableName: 'companies' }),
    ]);
    await ws.createTable('crm', 'notes', {}, [field('text', 'string'), field('of_companies', 'reverse', { refTableName: 'companies' })]);
    await ws.addFields('crm', 'companies', [field('parent', 'reference', { refTableName: 'companies' })]);
    const [acme] = await ws.createRecords('crm', 'companies', [{ name: 'Acme' }]);
    await ws.createRecords('crm', 'deals', [{ title: 'big', company: Number(acme), also: Number(acme) }]);
    const fieldIds = async (table: string) => Object.fromEntries(((await ws.getTable('crm', table)).fields as { id: string; name: string }[]).map((f) => [f.name, f.id]));
    const deals = await fieldIds('deals');
    const notes = await fieldIds('notes');
    const own = await fieldIds('companies');

    const poll = await openPoll(emu);
    const res = await api('DELETE', tablePath('crm', 'companies'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: companies.id } });

    expect(Object.keys(await fieldIds('deals'))).toEqual(['title']);
    expect(Object.keys(await fieldIds('notes'))).toEqual(['text']);
    expect(await ws.allRecords('crm', 'deals')).toEqual([{ id: expect.any(String), values: { title: 'big' } }]);
    const changes = await changesAfter(emu, poll);
    expect(changes.map((c: any) => [c.kind, c.id, c.action])).toEqual([
      ['Field', deals.company, 'deleted'],
      ['Field', deals.also, 'deleted'],
      ['Field', notes.of_companies, 'deleted'],
      ['Field', own.name, 'deleted'],
      ['Field', own.parent, 'deleted'],
      ['Table', companies.id, 'deleted'],
    ]);
    expect(new Set(changes.map((c: any) => c.changedAt)).size).toBe(1);
    // Nothing in the workspace points at a table that is gone.
    const workspace = ok(await api('GET', '')).body.data;
    const tableIds = new Set(workspace.modules.flatMap((m: any) => m.tables.map((t: any) => t.id)));
    const refs = workspace.modules.flatMap((m: any) => m.tables.flatMap((t: any) => t.fields.map((f: any) => f.refTableId))).filter(Boolean);
    expect(refs.filter((id: string) => !tableIds.has(id))).toEqual([]);
  });

  it('inside a deleted module go with their own tables, each logged once', async () => {
    await ws.createTable('crm', 'companies', {}, [field('name', 'string')]);
    await ws.createTable('crm', 'deals', {}, [field('company', 'reference', { refTableName: 'companies' })]);
    const poll = await openPoll(emu);
    ok(await adminOf(emu)('DELETE', 'modules/crm'));
    const changes = await changesAfter(emu, poll);
    expect(changes.map((c: any) => `${c.kind} ${c.action}`)).toEqual([
      'Field deleted', 'Table deleted', 'Field deleted', 'Table deleted', 'Module deleted',
    ]);
    expect(new Set(changes.map((c: any) => c.id)).size).toBe(changes.length);
  });
});
