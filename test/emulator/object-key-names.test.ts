import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { rawCall, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { postCsv } from '../helpers/csv-upload.ts';
import { adminOf, ok } from '../helpers/schema.ts';

/**
 * Names that are also keys of JavaScript objects match the spec's name rule, so they are stored,
 * filtered, sorted and returned like any other name. Bodies are sent as JSON text (an object
 * literal with a `__proto__` key would set a prototype instead of making a property).
 */

// Keys of objects, functions and arrays that the name rule ^[a-z0-9_]+$ allows (`toString` and
// the like are refused by the rule itself).
const NAMES = ['__proto__', 'constructor', 'prototype', 'length', 'caller'];
const own = (json: string) => JSON.parse(json) as Record<string, unknown>;
/** The values object `{ name: value, … }` as JSON would carry it. */
const valuesOf = (entries: [string, unknown][]) => own(`{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);

describe('names that are JavaScript object keys', () => {
  let emu: RunningEmulator;
  const send = (method: string, path: string, body?: unknown, token = emu.apiKey) =>
    rawCall(emu.url, method, path, { token, ...(body === undefined ? {} : { rawBody: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const table = (module: string, name: string) => `${emu.base}/modules/${module}/tables/${name}`;

  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(() => emu.close());

  it.each(NAMES)('module, table and field %s: created, listed and returned by name', async (name) => {
    ok(await send('POST', '/_emulator/modules', `{"name":${JSON.stringify(name)}}`, emu.adminToken), 'module');
    ok(await send('POST', `${emu.base}/modules/${name}/tables`, `{"name":${JSON.stringify(name)},"hasHistory":true}`), 'table');
    const fields = `[{"name":${JSON.stringify(name)},"type":"string","labels":{},"unique":true},{"name":"other","type":"number","labels":{}}]`;
    ok(await send('POST', `${table(name, name)}/fields/batch`, fields), 'fields');

    const workspace = ok(await send('GET', emu.base)).body.data;
    const mod = workspace.modules.find((m: any) => m.name === name);
    expect(mod.tables.map((t: any) => t.name)).toEqual([name]);
    expect(mod.tables[0].fields.map((f: any) => f.name)).toEqual([name, 'other']);
    expect(ok(await send('GET', `${table(name, name)}/fields/${name}`)).body.data.name).toBe(name);
    expect(ok(await send('PATCH', `${table(name, name)}/fields/${name}`, { labels: { '': 'x' } })).body.data.labels).toEqual({ '': 'x' });
  });

  it.each(NAMES)('field %s: written, read, updated, cleared, filtered and sorted', async (name) => {
    const path = table(name, name);
    const body = (entries: string[]) => `{"records":[${entries.join(',')}]}`;
    const rec = (v: string, n: number) => `{${JSON.stringify(name)}:${JSON.stringify(v)},"other":${n}}`;
    const created = ok(await send('POST', `${path}/records`, body([rec('b', 1), rec('a', 2), rec('c', 3)])), 'create');
    const ids: string[] = created.body.data.ids;

    const list = ok(await send('GET', `${path}/records`)).body.data;
    expect(list.map((r: any) => r.values)).toEqual([
      valuesOf([[name, 'b'], ['other', 1]]), valuesOf([[name, 'a'], ['other', 2]]), valuesOf([[name, 'c'], ['other', 3]]),
    ]);
    for (const r of list) expect(Object.hasOwn(r.values, name), name).toBe(true);

    const filtered = ok(await send('GET', `${path}/records?filter=${encodeURIComponent(`{${JSON.stringify(name)}:"a"}`)}`)).body.data;
    expect(filtered.map((r: any) => r.id)).toEqual([ids[1]]);
    const none = ok(await send('GET', `${path}/records?filter=${encodeURIComponent(`{${JSON.stringify(name)}:"zzz"}`)}`)).body.data;
    expect(none).toEqual([]);

    const sorted = ok(await send('GET', `${path}/records?sort=-${name}`)).body.data;
    expect(sorted.map((r: any) => r.values[name])).toEqual(['c', 'b', 'a']);
    const selected = ok(await send('GET', `${path}/records?fields=${name}`)).body.data;
    expect(selected[0].values).toEqual(valuesOf([[name, 'b']]));

    ok(await send('PATCH', `${path}/records`, `{"records":[{"id":${ids[0]},${JSON.stringify(name)}:"z"}]}`), 'update');
    ok(await send('PATCH', `${path}/records`, `{"records":[{"id":${ids[2]},${JSON.stringify(name)}:null}]}`), 'clear');
    const after = ok(await send('GET', `${path}/records?sort=id`)).body.data;
    expect(after.map((r: any) => r.values[name])).toEqual(['z', 'a', null]);
    const empty = ok(await send('GET', `${path}/records?filter=${encodeURIComponent(`{${JSON.stringify(name)}:null}`)}`)).body.data;
    expect(empty.map((r: any) => r.id)).toEqual([ids[2]]);

    const repeat = await send('POST', `${path}/records`, body([rec('a', 9)]));
    expect(repeat.status).toBe(400);
    expect(repeat.body.error.message).toContain(`unique field ${name}`);

    const changes = ok(await send('GET', `${path}/records/changes?since=2000-01-01T00:00Z`)).body.data;
    expect(changes.length).toBeGreaterThanOrEqual(5);
  });

  it.each(NAMES)('field %s: imported from CSV by header and by mappings, created and updated', async (name) => {
    const module = `csv_${NAMES.indexOf(name)}`;
    ok(await send('POST', '/_emulator/modules', `{"name":"${module}"}`, emu.adminToken), 'module');
    ok(await send('POST', `${emu.base}/modules/${module}/tables`, '{"name":"t"}'), 'table');
    const fields = `[{"name":"key","type":"string","labels":{}},{"name":${JSON.stringify(name)},"type":"string","labels":{}}]`;
    ok(await send('POST', `${table(module, 't')}/fields/batch`, fields), 'fields');
    const values = async () => ok(await send('GET', `${table(module, 't')}/records`)).body.data.map((r: any) => r.values);

    ok(await postCsv(emu, module, 't', `key,${name}\na,first\n`), 'append');
    const mappings = JSON.stringify([
      { csvColumnName: 'k', fieldName: 'key', updatePolicy: 'key' }, { csvColumnName: 'v', fieldName: name },
    ]);
    ok(await postCsv(emu, module, 't', 'k,v\na,second\nb,third\n', { importMode: 'upsert', mappings }), 'upsert');
    expect(await values()).toEqual([valuesOf([['key', 'a'], [name, 'second']]), valuesOf([['key', 'b'], [name, 'third']])]);
  });

  it('a label map refuses the key __proto__ (400), which is no locale code, and names it; and any label that is not a string', async () => {
    ok(await send('POST', '/_emulator/modules', '{"name":"lbl"}', emu.adminToken));
    ok(await send('POST', `${emu.base}/modules/lbl/tables`, '{"name":"base","labels":{"":"Base"}}'));
    ok(await send('POST', `${table('lbl', 'base')}/fields`, '{"name":"c","type":"choice","labels":{"":"C"},"options":[{"name":"a"}]}'));
    const proto = ['{"__proto__":"P","":"Base"}', '{"__proto__":{"polluted":1}}', '{"":"Base","__proto__":null}'];
    const notText = ['{"en":5}', '{"":"Base","en":{"x":1}}', '{"en":null}', '{"en":["a"]}'];
    const requests = (labels: string): [string, string, string, string?][] => [
      ['POST', `${emu.base}/modules/lbl/tables`, `{"name":"t1","labels":${labels}}`],
      ['PATCH', table('lbl', 'base'), `{"labels":${labels}}`],
      ['POST', `${table('lbl', 'base')}/fields`, `{"name":"f1","type":"string","labels":${labels}}`],
      ['PATCH', `${table('lbl', 'base')}/fields/c`, `{"labels":${labels}}`],
      ['PATCH', `${table('lbl', 'base')}/fields/c`, `{"options":[{"name":"a","labels":${labels}}]}`],
      ['POST', '/_emulator/modules', `{"name":"m1","labels":${labels}}`, emu.adminToken],
    ];
    for (const labels of [...proto, ...notText]) {
      for (const [method, path, body, token] of requests(labels)) {
        const res = await send(method, path, body, token);
        expect(res.status, `${method} ${path} ${body}: ${JSON.stringify(res.body)}`).toBe(400);
        if (proto.includes(labels)) expect(res.body.error.message).toContain('__proto__');
      }
    }
    const workspace = ok(await send('GET', emu.base)).body.data;
    const lbl = workspace.modules.find((m: any) => m.name === 'lbl');
    expect(lbl.tables.map((t: any) => [t.name, t.labels])).toEqual([['base', { '': 'Base' }]]);
    expect(lbl.tables[0].fields.map((f: any) => [f.name, f.labels, f.options[0].labels])).toEqual([['c', { '': 'C' }, undefined]]);
    expect(workspace.modules.map((m: any) => m.name)).not.toContain('m1');
  });

  it('an unknown name that is an object key is refused, not ignored', async () => {
    ok(await send('POST', '/_emulator/modules', '{"name":"plain"}', emu.adminToken));
    ok(await send('POST', `${emu.base}/modules/plain/tables`, '{"name":"people"}'));
    ok(await send('POST', `${table('plain', 'people')}/fields`, '{"name":"title","type":"string","labels":{}}'));
    for (const name of ['toString', 'hasOwnProperty', 'valueOf']) {
      const res = await send('POST', `${table('plain', 'people')}/fields`, `{"name":"${name}","type":"string","labels":{}}`);
      expect(res.status, name).toBe(400);
      expect(res.body.error.message).toContain('must match ^[a-z0-9_]+$');
    }
    for (const name of NAMES) {
      const write = await send('POST', `${table('plain', 'people')}/records`, `{"records":[{"title":"x",${JSON.stringify(name)}:"y"}]}`);
      expect(write.status, name).toBe(400);
      expect(write.body.error.message).toContain(`unknown field ${JSON.stringify(name)}`);
      const filter = await send('GET', `${table('plain', 'people')}/records?filter=${encodeURIComponent(`{${JSON.stringify(name)}:"y"}`)}`);
      expect(filter.status, name).toBe(400);
      const sort = await send('GET', `${table('plain', 'people')}/records?sort=${name}`);
      expect(sort.status, name).toBe(400);
    }
  });

  it('a seed with such names loads them', async () => {
    const seed = `{"modules":[{"name":"__proto__","tables":[{"name":"constructor","fields":[
      {"name":"__proto__","type":"string","labels":{}}],"records":[{"__proto__":"seeded"}]}]}]}`;
    ok(await send('POST', '/_emulator/reset', seed, emu.adminToken), 'reset');
    const list = ok(await send('GET', `${table('__proto__', 'constructor')}/records`)).body.data;
    expect(list.map((r: any) => r.values)).toEqual([valuesOf([['__proto__', 'seeded']])]);
  });

  it('the client keeps such keys in the values it returns', async () => {
    const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
    try {
      const page = await client.listRecords('__proto__', 'constructor', { filter: valuesOf([['__proto__', 'seeded']]) as any });
      expect(page.data).toHaveLength(1);
      expect(Object.hasOwn(page.data[0]!.values, '__proto__')).toBe(true);
      expect(page.data[0]!.values.__proto__).toBe('seeded');
      const all = [];
      for await (const records of client.iterateRecords('__proto__', 'constructor')) all.push(...records);
      expect(all.map((r) => r.values)).toEqual([valuesOf([['__proto__', 'seeded']])]);
    } finally {
      await client.close();
      ok(await adminOf(emu)('POST', 'reset'));
    }
  });
});
