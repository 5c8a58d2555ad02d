import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPath, endpoints, type Endpoint } from '../../src/api/index.ts';
import { apiOf, call, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, field, fieldsPath, makeModule, makeTable, snapshot } from '../helpers/schema.ts';

const PARAMS = { moduleName: 'crm', tableName: 'people', fieldName: 'name' };

describe('authentication', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({
      apiKeys: [
        { key: 'test-key', grants: 'all' },
        { key: 'no-grants', grants: [] },
        { key: 'perm-only', grants: ['schema:manage-permissions'] },
        { key: 'other-grant', grants: ['records:read'] },
      ],
    });
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
  });
  afterAll(() => emu.close());

  const all = Object.entries(endpoints) as [string, Endpoint][];

  // Without a key and with a wrong one: auth.missing-key-401 and auth.invalid-key-401 of the
  // conformance suite, on every endpoint. The admin token is a credential only the emulator has.
  it.each(all)('%s answers 401 with the admin token', async (_name, endpoint) => {
    const path = buildPath(endpoint.path, { workspaceId: emu.workspaceId, ...PARAMS });
    const res = await call(emu.url, endpoint.method, path, { token: emu.adminToken, ...(endpoint.body ? { body: {} } : {}) });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { message: expect.any(String) } });
  });

  it('answers 401 on /openapi.json without a key and serves it with one', async () => {
    expect((await call(emu.url, 'GET', '/openapi.json')).status).toBe(401);
    const res = await call(emu.url, 'GET', '/openapi.json', { token: emu.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  });

  it('rejects a malformed Authorization header', async () => {
    for (const header of ['test-key', 'Basic dGVzdC1rZXk=', 'Bearer', 'Bearer test-key extra']) {
      const res = await call(emu.url, 'GET', emu.base, { headers: { authorization: header } });
      expect(res.status, header).toBe(401);
    }
  });

  it('checks auth before the body: a bad body without a key is 401, not 400', async () => {
    const res = await call(emu.url, 'POST', `${emu.base}/modules/crm/tables`, { rawBody: '{not json' });
    expect(res.status).toBe(401);
  });

  it('guards the admin surface with the admin token only', async () => {
    const admin = adminOf(emu);
    expect((await admin('GET', 'clock', undefined, null)).status).toBe(401);
    expect((await admin('GET', 'clock', undefined, emu.apiKey)).status).toBe(401);
    expect((await admin('GET', 'clock', undefined, 'nope')).status).toBe(401);
    expect((await admin('GET', 'clock')).status).toBe(200);
  });

  it.each([
    ['POST', 'modules'], ['DELETE', 'modules/crm'], ['POST', 'reset'], ['POST', 'seed'], ['GET', 'faults'],
    ['PUT', 'faults'], ['DELETE', 'faults'], ['GET', 'clock'], ['PUT', 'clock'], ['DELETE', 'clock'],
  ])('admin %s /_emulator/%s answers 401 without the admin token and changes nothing', async (method, path) => {
    const before = await snapshot(emu);
    for (const token of [null, emu.apiKey]) {
      const res = await adminOf(emu)(method, path, method === 'GET' || method === 'DELETE' ? undefined : {}, token);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/admin token/);
    }
    expect(await snapshot(emu)).toEqual(before);
  });

  it('answers 404 on the admin surface when no admin token is configured', async () => {
    const bare = await startEmulator({ adminToken: undefined as unknown as string });
    try {
      const res = await call(bare.url, 'GET', '/_emulator/clock', { token: 'test-admin' });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toMatch(/admin/);
    } finally {
      await bare.close();
    }
  });

  describe('the schema:manage-permissions grant (403 without it)', () => {
    const path = fieldsPath('crm', 'people');

    it.each(['canRead', 'canWrite', 'readRoles', 'writeRoles'])('creating a field with %s needs the grant', async (prop) => {
      const value = prop.endsWith('Roles') ? ['admin'] : 'true';
      for (const key of ['no-grants', 'other-grant']) {
        const res = await apiOf(emu)('POST', path, field(`g_${prop.toLowerCase()}`, 'string', { [prop]: value }), key);
        expect(res.status, key).toBe(403);
        expect(res.body.error.message).toContain('schema:manage-permissions');
        expect(res.body.error.message).toContain(`body.${prop}`);
      }
      const granted = await apiOf(emu)('POST', path, field(`g_${prop.toLowerCase()}`, 'string', { [prop]: value }), 'perm-only');
      expect(granted.status).toBe(201);
    });

    it('creating a field without permission properties needs no grant', async () => {
      const res = await apiOf(emu)('POST', path, field('plain', 'string'), 'no-grants');
      expect(res.status).toBe(201);
    });

    it.each([
      ['canRead', 'true'], ['canRead', null], ['canWrite', 'true'], ['canWrite', null], ['readRoles', ['editor']],
      ['writeRoles', ['admin']],
    ])('updating %s (%j) needs the grant', async (prop, value) => {
      const res = await apiOf(emu)('PATCH', `${path}/name`, { [prop]: value }, 'no-grants');
      expect(res.status).toBe(403);
      expect((await apiOf(emu)('PATCH', `${path}/name`, { [prop]: value }, 'perm-only')).status).toBe(200);
    });

    it.each(['createRoles', 'deleteRoles', 'readRoles', 'writeRoles'])("setting a table's %s needs the grant", async (list) => {
      const before = await snapshot(emu);
      for (const key of ['no-grants', 'other-grant']) {
        const res = await apiOf(emu)('PATCH', 'modules/crm/tables/people', { isHidden: true, [list]: ['admin'] }, key);
        expect(res.status, key).toBe(403);
        expect(res.body.error.message).toContain('schema:manage-permissions');
        expect(res.body.error.message).toContain(`body.${list}`);
      }
      expect(await snapshot(emu)).toEqual(before);
      const granted = await apiOf(emu)('PATCH', 'modules/crm/tables/people', { [list]: ['admin', 'editor'] }, 'perm-only');
      expect(granted.status).toBe(200);
    });

    it("a table's other properties need no grant", async () => {
      const res = await apiOf(emu)('PATCH', 'modules/crm/tables/people', { labels: { '': 'People' }, hasHistory: true }, 'no-grants');
      expect(res.status).toBe(200);
    });

    it('updating other properties needs no grant', async () => {
      const res = await apiOf(emu)('PATCH', `${path}/name`, { required: true, labels: { '': 'Name' } }, 'no-grants');
      expect(res.status).toBe(200);
    });

    it('one permission property anywhere in a batch rejects the whole batch', async () => {
      const before = await snapshot(emu);
      const create = await apiOf(emu)(
        'POST', `${path}/batch`, [field('b1', 'string'), field('b2', 'string', { canRead: 'true' })], 'no-grants',
      );
      expect(create.status).toBe(403);
      expect(create.body.error.message).toContain('body[1].canRead');
      const update = await apiOf(emu)(
        'PATCH', `${path}/batch`, [{ fieldName: 'name', required: false }, { fieldName: 'plain', writeRoles: ['admin'] }],
        'no-grants',
      );
      expect(update.status).toBe(403);
      expect(await snapshot(emu)).toEqual(before);
    });
  });
});
