import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CREATABLE_FIELD_TYPES, endpoints } from '../../src/api/index.ts';
import { buildServer } from '../../src/emulator/index.ts';
import { apiOf, startEmulator } from '../helpers/emulator.ts';
import { adminOf, field, ok, tablePath } from '../helpers/schema.ts';

const EXAMPLE = JSON.parse(readFileSync(new URL('../../config/emulator-seed.example.json', import.meta.url), 'utf8'));

async function buildError(seed: unknown): Promise<string> {
  try {
    const app = await buildServer({ seed });
    await app.close();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('buildServer accepted the seed');
}

describe('seed', () => {
  it('loads the example seed: every creatable type, references, options and records', async () => {
    const emu = await startEmulator({ seed: EXAMPLE });
    try {
      const api = apiOf(emu);
      const res = await api('GET', '');
      expect(endpoints.getWorkspace.response.safeParse(res.body).success).toBe(true);
      const ws = res.body.data;
      expect(ws.name).toBe('Northwind Studio');
      expect(ws.modules.map((m: any) => m.name)).toEqual(['crm', 'ops']);
      const fields = ws.modules.flatMap((m: any) => m.tables.flatMap((t: any) => t.fields));
      expect(new Set(fields.map((f: any) => f.type))).toEqual(new Set(CREATABLE_FIELD_TYPES));
      const [companies, contacts] = ws.modules[0].tables;
      expect(contacts.fields.find((f: any) => f.name === 'company').refTableId).toBe(companies.id);
      // A reverse field may name a table defined later in the seed.
      expect(companies.fields.find((f: any) => f.name === 'contacts').refTableId).toBe(contacts.id);
      const industry = companies.fields.find((f: any) => f.name === 'industry');
      expect(industry.options.map((o: any) => o.name)).toEqual(['Software', 'Retail', 'Manufacturing']);
      const people = (await api('GET', `${tablePath('crm', 'contacts')}/records`)).body.data;
      expect(people.map((r: any) => r.values.full_name)).toEqual(['Ada Lovelace', 'Grace Hopper', 'Jun Ito']);
      expect(people[0].values.company).toBe(1);
      const meetings = (await api('GET', `${tablePath('ops', 'meetings')}/records`)).body.data;
      expect(meetings).toHaveLength(2);
      const changes = (await api('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.data;
      expect(changes.filter((c: any) => c.kind === 'Module')).toHaveLength(2);
    } finally {
      await emu.close();
    }
  });

  it.each([
    [{ modules: {} }, 'seed.modules: '],
    [{ modules: [{ name: 'Bad' }] }, 'seed.modules[0].name: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't' }, { name: 'u', fields: [field('f', 'string'), field('g', 'string'), field('h', 'any')] }] }] }, 'seed.modules[0].tables[1].fields[2].type: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', fields: [{ name: 'x', type: 'string', labels: 'X' }] }] }] }, 'seed.modules[0].tables[0].fields[0].labels: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', colour: 'red' }] }] }, 'seed.modules[0].tables[0]: unknown property "colour"'],
    [{ modules: [{ name: 'a', id: 'm1' }] }, 'seed.modules[0]: unknown property "id"'],
    [{ modules: [{ name: 'a' }, { name: 'a' }] }, 'seed.modules[1]: module a already exists'],
    [{ modules: [{ name: 'a', tables: [{ name: 't' }, { name: 't' }] }] }, 'seed.modules[0].tables[1]: table t already exists'],
    [{ modules: [{ name: 'a', tables: [{ name: 't', fields: [field('x', 'string'), field('x', 'number')] }] }] }, 'seed.modules[0].tables[0].fields[1].name: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', fields: [field('r', 'reference', { refTableName: 'other' })] }] }, { name: 'b', tables: [{ name: 'other' }] }] }, 'seed.modules[0].tables[0].fields[0].refTableName: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', fields: [field('g', 'string', { canRead: '(' })] }] }] }, 'seed.modules[0].tables[0].fields[0].canRead: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', fields: [field('n', 'number')], records: [{ n: 1 }, { n: 'two' }] }] }] }, 'seed.modules[0].tables[0].records[1].n: '],
    [{ modules: [{ name: 'a', tables: [{ name: 't', records: [{ nope: 1 }] }] }] }, 'seed.modules[0].tables[0].records[0]: '],
    [{ name: '' }, 'seed.name: '],
    ['not an object', 'seed: '],
  ])('a bad seed fails buildServer naming the place: %j', async (seed, text) => {
    expect(await buildError(seed)).toContain(text);
  });

  it('the workspaceName option wins over the seed name', async () => {
    const emu = await startEmulator({ seed: { name: 'From seed' }, workspaceName: 'From option' });
    try {
      expect((await apiOf(emu)('GET', '')).body.data.name).toBe('From option');
    } finally {
      await emu.close();
    }
  });
});

describe('--data persistence', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-seed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the workspace, its name, ids and change log across a restart; the seed loads only once', async () => {
    const dataFile = join(dir, 'state.db');
    const seed = { name: 'Persistent', modules: [{ name: 'crm', tables: [{ name: 'people', hasHistory: true, fields: [field('name', 'string')], records: [{ name: 'Ann' }] }] }] };

    const first = await startEmulator({ dataFile, seed });
    const api1 = apiOf(first);
    ok(await api1('POST', 'modules/crm/tables', { name: 'later' }));
    ok(await api1('POST', 'modules/crm/tables/people/fields', field('status', 'choice', { options: [{ name: 'new' }] })));
    ok(await api1('POST', `${tablePath('crm', 'people')}/records`, { records: [{ name: 'Bob' }] }));
    const before = (await api1('GET', '')).body;
    const changes = (await api1('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.data;
    await first.close();

    // Same file and seed again: the seed is not re-applied (no "module crm already exists").
    const second = await startEmulator({ dataFile, seed });
    const api2 = apiOf(second);
    expect((await api2('GET', '')).body).toEqual(before);
    expect((await api2('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.data).toEqual(changes);
    const names = (await api2('GET', `${tablePath('crm', 'people')}/records`)).body.data.map((r: any) => r.values.name);
    expect(names).toEqual(['Ann', 'Bob']);
    // Ids continue after the stored ones.
    const next = ok(await api2('POST', 'modules/crm/tables', { name: 'third' })).body.data;
    expect(next.id).toBe('t3');
    const opt = ok(await api2('POST', 'modules/crm/tables/people/fields', field('kind', 'choice', { options: [{ name: 'x' }] }))).body.data;
    expect(opt.options[0].id).toBe('o2');
    await second.close();

    // Without the seed the stored workspace and its name stay.
    const third = await startEmulator({ dataFile });
    expect((await apiOf(third)('GET', '')).body.data.name).toBe('Persistent');
    expect((await apiOf(third)('GET', '')).body.data.modules[0].tables.map((t: any) => t.name)).toEqual(['people', 'later', 'third']);
    await third.close();
  });

  it('still rejects a bad seed on a restart, and an admin reset persists', async () => {
    const dataFile = join(dir, 'reset.db');
    const first = await startEmulator({ dataFile, seed: { modules: [{ name: 'crm' }] } });
    ok(await adminOf(first)('POST', 'reset', { name: 'After reset', modules: [{ name: 'ops' }] }));
    await first.close();
    await expect(buildServer({ dataFile, seed: { modules: 'x' } })).rejects.toThrow(/seed\.modules/);
    const second = await startEmulator({ dataFile, seed: { modules: [{ name: 'crm' }] } });
    const ws = (await apiOf(second)('GET', '')).body.data;
    expect(ws.name).toBe('After reset');
    expect(ws.modules.map((m: any) => m.name)).toEqual(['ops']);
    await second.close();
  });
});
