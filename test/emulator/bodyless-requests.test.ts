import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, rawCall, rawHttp, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, field, fieldsPath, makeModule, makeTable, ok, recordsPath, tablePath } from '../helpers/schema.ts';

// Many HTTP clients send a Content-Type on every request, a DELETE included, with an empty body.
// A route that takes no body takes that as no body, whatever the content type.

describe('routes without a body accept an empty one, whatever its content type', () => {
  let emu: RunningEmulator;
  const admin = () => adminOf(emu);
  beforeAll(async () => {
    emu = await startEmulator();
  });
  beforeEach(async () => {
    ok(await admin()('POST', 'reset'));
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string'), field('note', 'string')]);
  });
  afterAll(() => emu.close());

  const contentTypes = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/xml'];

  it.each(contentTypes)('DELETE of a table and of a field with Content-Type %s and an empty body: 200', async (type) => {
    const headers = { 'content-type': type };
    const field = await call(emu.url, 'DELETE', `${emu.base}/${fieldsPath('crm', 'people')}/note`, { token: emu.apiKey, rawBody: '', headers });
    expect(field.status, JSON.stringify(field.body)).toBe(200);
    expect(field.body.data.name).toBe('note');
    const table = await call(emu.url, 'DELETE', `${emu.base}/${tablePath('crm', 'people')}`, { token: emu.apiKey, rawBody: '', headers });
    expect(table.status, JSON.stringify(table.body)).toBe(200);
    expect(table.body.data.id).toMatch(/^t[0-9]+$/);
  });

  it('GET with Content-Type: application/json and an empty body: 200', async () => {
    for (const path of [emu.base, `${emu.base}/${tablePath('crm', 'people')}`, `${emu.base}/${recordsPath('crm', 'people')}`]) {
      const res = await rawCall(emu.url, 'GET', path, { token: emu.apiKey, rawBody: '' });
      expect(res.status, path).toBe(200);
    }
  });

  it('an empty chunked body counts as no body too', async () => {
    const res = await rawHttp(
      emu.url,
      `DELETE ${emu.base}/${tablePath('crm', 'people')} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${emu.apiKey}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it.each([
    ['DELETE', 'faults'],
    ['DELETE', 'clock'],
    ['POST', 'reset'],
    ['DELETE', 'modules/crm'],
  ])('admin %s /_emulator/%s with Content-Type: application/json and an empty body: 200', async (method, path) => {
    const res = await call(emu.url, method, `/_emulator/${path}`, {
      token: emu.adminToken, rawBody: '', headers: { 'content-type': 'application/json' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('a reset with an empty JSON body loads no seed: an empty workspace', async () => {
    const res = await call(emu.url, 'POST', '/_emulator/reset', {
      token: emu.adminToken, rawBody: '', headers: { 'content-type': 'application/json' },
    });
    expect(res.body.data.modules).toEqual([]);
  });

  it('a route that wants a body still answers 400 for an empty one, naming the body', async () => {
    for (const [method, path] of [
      ['POST', `${emu.base}/${recordsPath('crm', 'people')}`],
      ['DELETE', `${emu.base}/${recordsPath('crm', 'people')}`],
      ['DELETE', `${emu.base}/${fieldsPath('crm', 'people')}/batch`],
      ['POST', '/_emulator/modules'],
    ] as const) {
      const token = path.startsWith('/_emulator/') ? emu.adminToken : emu.apiKey;
      const res = await call(emu.url, method, path, { token, rawBody: '', headers: { 'content-type': 'application/json' } });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error.message, `${method} ${path}`).toMatch(/^body: /);
    }
  });
});
