import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, call, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, fieldsPath, makeModule, makeTable, snapshot, tablePath, tablesPath } from '../helpers/schema.ts';

describe('malformed input answers 400 naming what is wrong, never 500', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const send = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call(emu.url, method, `${emu.base}/${path}`, { token: emu.apiKey, ...options });

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string'), field('status', 'choice', { options: [{ name: 'a' }] })]);
  });
  afterAll(() => emu.close());

  it.each([
    ['POST', tablesPath('crm'), '{"name": '],
    ['POST', tablesPath('crm'), "{'name': 'x'}"],
    ['PATCH', tablePath('crm', 'people'), 'nul'],
    ['POST', `${fieldsPath('crm', 'people')}/batch`, '[{"name":"x",}]'],
    ['DELETE', `${fieldsPath('crm', 'people')}/batch`, '{"fieldNames": ["a"'],
  ])('bad JSON: %s %s', async (method, path, rawBody) => {
    const res = await send(method, path, { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/not valid JSON/);
  });

  it('an empty JSON body', async () => {
    const res = await send('POST', tablesPath('crm'), { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body');
  });

  it('a missing body', async () => {
    const res = await send('POST', tablesPath('crm'));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body');
  });

  it.each(['application/xml', 'text/csv', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'the content type %s', async (type) => {
      const res = await send('POST', tablesPath('crm'), { rawBody: 'name=x', headers: { 'content-type': type } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/content type|body/);
    },
  );

  it('text/plain is refused like any content type other than JSON, even holding JSON', async () => {
    const res = await send('POST', tablesPath('crm'), { rawBody: '{"name":"x"}', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unsupported content type "text/plain": send application/json');
  });

  it.each([
    ['POST', tablesPath('crm'), { name: 5 }, 'body.name'],
    ['POST', tablesPath('crm'), { name: 'x', isHidden: 'true' }, 'body.isHidden'],
    ['POST', tablesPath('crm'), { name: 'x', labels: { '': 5 } }, 'body.labels'],
    ['POST', tablesPath('crm'), { name: 'x', icon: { filling: 'full' } }, 'body.icon.filling'],
    ['POST', tablesPath('crm'), [{ name: 'x' }], 'body'],
    ['POST', tablesPath('crm'), null, 'body'],
    ['PATCH', tablePath('crm', 'people'), { hasHistory: null }, 'body.hasHistory'],
    ['PATCH', tablePath('crm', 'people'), { readRoles: 'admin' }, 'body.readRoles'],
    ['POST', fieldsPath('crm', 'people'), { name: 'x', type: 7, labels: {} }, 'body.type'],
    ['POST', fieldsPath('crm', 'people'), { name: 'x', type: 'string', labels: [] }, 'body.labels'],
    ['POST', fieldsPath('crm', 'people'), { name: 'x', type: 'string', labels: {}, required: 'no' }, 'body.required'],
    ['POST', `${fieldsPath('crm', 'people')}/batch`, { name: 'x' }, 'body'],
    ['PATCH', `${fieldsPath('crm', 'people')}/batch`, [{ fieldName: 5 }], 'body[0].fieldName'],
    ['PATCH', `${fieldsPath('crm', 'people')}/status`, { options: [{ name: 'a', order: 'first' }] }, 'body.options'],
    ['DELETE', `${fieldsPath('crm', 'people')}/batch`, { fieldNames: 'name' }, 'body.fieldNames'],
  ])('wrong types: %s %s %j', async (method, path, body, where) => {
    const res = await api(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(where);
  });

  it.each([
    ['POST', tablesPath('crm'), { name: 'x', owner: 'me' }, 'owner'],
    ['PATCH', tablePath('crm', 'people'), { id: 't1' }, '"id"'],
    ['POST', fieldsPath('crm', 'people'), { ...field('x', 'string'), id: 'f1' }, '"id"'],
    ['PATCH', `${fieldsPath('crm', 'people')}/name`, { type: 'number' }, '"type"'],
    ['PATCH', `${fieldsPath('crm', 'people')}/status`, { options: [{ name: 'a', value: 1 }] }, '"value"'],
    ['DELETE', `${fieldsPath('crm', 'people')}/batch`, { fieldNames: ['name'], force: true }, '"force"'],
  ])('unknown properties: %s %s %j', async (method, path, body, text) => {
    const res = await api(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('unknown propert');
    expect(res.body.error.message).toContain(text);
  });

  it.each([
    'schema/changes?since=2026-01-01T00:00Z&limit=101',
    'schema/changes?since=2026-01-01T00:00Z&limit=0',
    'schema/changes?since=2026-01-01T00:00Z&offset=-3',
    'schema/changes?since=2026-01-01T00:00Z&limit=1e2',
    `${fieldsPath('crm', 'people')}?limit=0`,
    `${fieldsPath('crm', 'people')}?offset=1.5`,
  ])('out-of-range numbers: %s', async (path) => {
    const res = await api('GET', path);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/query\.(limit|offset)/);
  });

  it.each([
    ['POST', tablesPath('crm'), '{"name":"x","icon":{"filling":1e400}}', 'body.icon.filling'],
    ['POST', fieldsPath('crm', 'people'), '{"name":"n","type":"number","labels":{},"defaultValue":-1e400}', 'body.defaultValue'],
  ])('non-finite numbers: %s %s %s', async (method, path, rawBody, where) => {
    // JSON has no Infinity, but 1e400 parses to it: the schemas refuse it.
    const res = await send(method, path, { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(where);
  });

  it.each([
    'since=2025-02-29T00:00Z', 'since=2026-04-31T00:00Z', 'since=2026-1-1T00:00Z', 'since=2026-01-01T00:00:00.Z',
    'since=2026-01-01 00:00Z', 'since=1767225600000', 'since=2026-01-01T00:00Z&asOf=tomorrow',
  ])('bad timestamps: %s', async (query) => {
    const res = await api('GET', `schema/changes?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/query\.(since|asOf): must be a UTC timestamp/);
  });

  it.each([
    ['GET', 'modules/CRM/tables', 'path.moduleName'],
    ['GET', `modules/crm/tables/${'x'.repeat(101)}`, 'path.tableName'],
    ['GET', 'modules/crm/tables/people/fields/Name', 'path.fieldName'],
    ['DELETE', 'modules/crm/tables/people%20x', 'path.tableName'],
  ])('malformed path parameters: %s %s', async (method, path, where) => {
    const res = await api(method, path);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(where);
  });

  it.each([
    ['schema/changes', 'query.since: since is required'],
    ['modules/crm/tables/people/records/changes', 'query.since: since is required'],
    ['modules/crm/tables/people/records?limit=1&limit=2', 'query.limit: must be given once, an integer 1 to 100'],
    ['schema/changes?since=2026-01-01T00:00Z&offset=1&offset=2', 'query.offset: must be given once, an integer 0 or more'],
    ['modules/crm/tables/people/records?offset=99999999999999999999', 'query.offset: must be at most 9007199254740991'],
    ['modules/crm/tables/people/records?sort=name&sort=id', 'query.sort: must be given once, a field name or id, optionally prefixed with -'],
    ['schema/changes?since=2026-01-01T00:00Z&since=2026-01-02T00:00Z', 'query.since: must be given once, a UTC timestamp'],
  ])('query parameters are refused in the emulator\'s own words: %s', async (path, message) => {
    const res = await api('GET', path);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(message);
  });

  it('a record id past 2^53 - 1 is refused once, for being too large', async () => {
    for (const id of ['9007199254740992', 9007199254740992]) {
      const res = await api('PATCH', 'modules/crm/tables/people/records', { records: [{ id, name: 'x' }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe('body.records[0].id: record id must be at most 2^53 - 1');
    }
    const filtered = await api('GET', `modules/crm/tables/people/records?filter=${encodeURIComponent('{"id":"9007199254740992"}')}`);
    expect(filtered.body.error.message).toBe('query.filter.id: record id must be at most 2^53 - 1');
  });

  it('a body over 6 MB answers 413', async () => {
    const res = await api('POST', tablesPath('crm'), { name: 'big', labels: { '': 'x'.repeat(7 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.error.message).toMatch(/too large/);
  });

  it('arbitrary JSON bodies never cause a 500 and leave state valid', async () => {
    const before = await snapshot(emu);
    const targets: [string, string][] = [
      ['POST', tablesPath('crm')],
      ['PATCH', tablePath('crm', 'people')],
      ['POST', fieldsPath('crm', 'people')],
      ['POST', `${fieldsPath('crm', 'people')}/batch`],
      ['PATCH', `${fieldsPath('crm', 'people')}/batch`],
      ['PATCH', `${fieldsPath('crm', 'people')}/status`],
      ['DELETE', `${fieldsPath('crm', 'people')}/batch`],
    ];
    const keys = ['name', 'type', 'labels', 'options', 'fieldName', 'fieldNames', 'canRead', 'canWrite', 'defaultValue',
      'refTableName', 'hasHistory', 'icon', 'readRoles', 'expression', 'id', 'order'];
    const value = fc.letrec((tie) => ({
      any: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom('', 'string', 'choice', 'reference', 'people', '(', 'o1', 'admin', '#ffffff'),
        fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
        fc.array(tie('any'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom(...keys), tie('any'), { maxKeys: 4 }),
      ),
    })).any;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), value, async ([method, path], body) => {
        const res = await api(method, path, body);
        expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 400) expect(res.body.error.message).toEqual(expect.any(String));
      }),
      { numRuns: 300 },
    );
    // Whatever succeeded, the workspace still reads back and validates.
    const after = await snapshot(emu);
    expect(after.workspace.data.modules[0].name).toBe(before.workspace.data.modules[0].name);
  });
});
