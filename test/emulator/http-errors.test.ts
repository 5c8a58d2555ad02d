import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../src/api/index.ts';
import { rawCall, rawHttp, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, makeModule, makeTable } from '../helpers/schema.ts';

const errorBody = { error: { message: expect.any(String) } };

describe('errors of the HTTP layer answer the error body, and 401 comes before them', () => {
  let emu: RunningEmulator;
  const records = () => `${emu.base}/modules/crm/tables/people/records`;

  beforeAll(async () => {
    emu = await startEmulator();
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
  });
  afterAll(() => emu.close());

  it.each([
    ['a malformed percent-encoding', () => `${emu.base}/modules/%E0%A4%A/tables`, /URL is not valid/],
    ['a path parameter over 1000 characters', () => `${emu.base}/modules/${'m'.repeat(1001)}/tables`, /over 1000 characters/],
  ])('%s: 401 without a key, 400 naming it with one', async (_what, path, message) => {
    for (const token of [null, 'wrong', emu.adminToken]) {
      const res = await rawCall(emu.url, 'GET', path(), { token });
      expect(res.status, String(token)).toBe(401);
      expect(res.body).toEqual(errorBody);
    }
    const res = await rawCall(emu.url, 'GET', path(), { token: emu.apiKey });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody);
    expect(res.body.error.message).toMatch(message);
  });

  it('a malformed percent-encoding under /_emulator/ wants the admin token', async () => {
    expect((await rawCall(emu.url, 'GET', '/_emulator/%E0%A4%A', { token: emu.apiKey })).status).toBe(401);
    const res = await rawCall(emu.url, 'GET', '/_emulator/%E0%A4%A', { token: emu.adminToken });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody);
  });

  it('headers over the limit: 431 with the error body', async () => {
    const res = await rawHttp(emu.url, `GET ${emu.base} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body).toEqual(errorBody);
    expect(res.body.error.message).toMatch(/headers too large/);
  });

  it.each([
    ['a header line without a colon', `GET / HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n`],
    ['a bad request line', `GET\r\n\r\n`],
    ['a bad content-length', `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`],
  ])('%s: 400 with the error body', async (_what, bytes) => {
    const res = await rawHttp(emu.url, bytes);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errorBody);
    expect(res.body.error.message).toMatch(/malformed HTTP request/);
  });

  const badBodies: [string, string | Buffer, Record<string, string>, number][] = [
    ['bad JSON', '{"records": [', {}, 400],
    ['an empty JSON body', '', {}, 400],
    ['a content type other than JSON', '<records/>', { 'content-type': 'application/xml' }, 400],
    ['a body over the limit', Buffer.alloc(RECORDS_PAYLOAD_LIMIT_BYTES + 1024, 0x20), {}, 413],
    ['a wrong type', '{"records": 5}', {}, 400],
  ];

  it.each(badBodies)('%s: 401 without a valid key, before the body is looked at', async (_what, rawBody, headers, status) => {
    for (const token of [null, 'wrong', emu.adminToken]) {
      const res = await rawCall(emu.url, 'POST', records(), { token, rawBody, headers });
      expect(res.status, String(token)).toBe(401);
      expect(res.body).toEqual(errorBody);
    }
    const res = await rawCall(emu.url, 'POST', records(), { token: emu.apiKey, rawBody, headers });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(errorBody);
  });

  it.each(badBodies)('%s on the admin surface: 401 without the admin token', async (_what, rawBody, headers) => {
    for (const token of [null, emu.apiKey]) {
      const res = await rawCall(emu.url, 'POST', '/_emulator/modules', { token, rawBody, headers });
      expect(res.status, String(token)).toBe(401);
      expect(res.body).toEqual(errorBody);
    }
  });

  it('a body announced over the limit and never sent: 401 at once, and the connection is closed', async () => {
    for (const path of [records(), '/_emulator/modules']) {
      const res = await rawHttp(
        emu.url,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${RECORDS_PAYLOAD_LIMIT_BYTES + 1}\r\n\r\n{"records": [`,
      );
      expect(res.status, path).toBe(401);
      expect(res.body).toEqual(errorBody);
    }
  });

  it('an unknown path: 401 without a key, 404 with one', async () => {
    expect((await rawCall(emu.url, 'GET', '/api/v2/nothing')).status).toBe(401);
    const res = await rawCall(emu.url, 'GET', '/api/v2/nothing', { token: emu.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(errorBody);
  });
});
