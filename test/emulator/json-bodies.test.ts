import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiOf, rawCall, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, field, makeModule, makeTable, ok, recordsPath } from '../helpers/schema.ts';

// JSON bodies are UTF-8 text, sent as they are (RFC 8259): bytes that are not are refused, never read with
// replacement characters in their place.

describe('JSON bodies are UTF-8', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const records = () => `${emu.base}/${recordsPath('crm', 'people')}`;
  const post = (rawBody: Buffer, contentType = 'application/json') =>
    rawCall(emu.url, 'POST', records(), { token: emu.apiKey, rawBody, headers: { 'content-type': contentType } });
  const names = async () => ok(await api('GET', recordsPath('crm', 'people'))).body.data.map((r: any) => r.values.name);
  /** `{"records":[{"name":…}]}` around the given bytes. */
  const body = (...name: (string | number[])[]) =>
    Buffer.concat([
      Buffer.from('{"records":[{"name":"'),
      ...name.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))),
      Buffer.from('"}]}'),
    ]);

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
  });
  beforeEach(async () => {
    ok(await adminOf(emu)('POST', 'reset'));
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
  });
  afterAll(() => emu.close());

  // The offsets count from the start of the body: 21 bytes of `{"records":[{"name":"` come first.
  it.each([
    ['a Latin-1 byte', ['caf', [0xe9]], 24],
    ['a lone continuation byte', ['a', [0x80], 'b'], 22],
    ['an overlong encoding', ['a', [0xc0, 0xaf]], 22],
    ['an encoded surrogate', [[0xed, 0xa0, 0x80]], 21],
    ['a sequence cut short', ['ok', [0xe2, 0x82]], 23],
  ] as const)('%s: 400 naming the byte, and nothing is created', async (_what, parts, offset) => {
    const res = await post(body(...(parts as unknown as (string | number[])[])));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`body is not valid UTF-8 (byte ${offset}): JSON bodies are UTF-8 text`);
    expect(await names()).toEqual([]);
  });

  it('a sequence cut short by the end of the body: 400 naming its first byte', async () => {
    const res = await post(Buffer.concat([Buffer.from('{"records":[]}'), Buffer.from([0xf0, 0x9f])]));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('body is not valid UTF-8 (byte 14): JSON bodies are UTF-8 text');
  });

  it('a replacement character sent as such is text like any other', async () => {
    expect((await post(body('a', [0xef, 0xbf, 0xbd], 'b', [0xe2, 0x82, 0xac]))).status).toBe(201);
    expect(await names()).toEqual(['a\uFFFDb€']);
  });

  it('a byte-order mark before the JSON text is dropped', async () => {
    expect((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body('café')]))).status).toBe(201);
    expect(await names()).toEqual(['café']);
  });

  it.each(['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json;charset=utf8'])(
    'Content-Type %s is UTF-8', async (type) => {
      expect((await post(body('café'), type)).status).toBe(201);
      expect(await names()).toEqual(['café']);
    },
  );

  it.each(['iso-8859-1', 'latin1', 'utf-16', 'us-ascii'])('charset=%s: 400 naming it, even for ASCII bytes', async (charset) => {
    for (const bytes of [body('caf', [0xe9]), body('cafe')]) {
      const res = await post(bytes, `application/json; charset=${charset}`);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`unsupported charset "${charset}": JSON bodies are UTF-8 text; send charset=utf-8 or none`);
    }
    expect(await names()).toEqual([]);
  });

  it('the same rules hold on the admin surface', async () => {
    const res = await rawCall(emu.url, 'POST', '/_emulator/modules', {
      token: emu.adminToken, rawBody: Buffer.from([...Buffer.from('{"name":"x","labels":{"":"'), 0xff, ...Buffer.from('"}}')]),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^body is not valid UTF-8 \(byte 26\)/);
  });
});

describe('request bodies are sent without a content coding', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
  });
  afterAll(() => emu.close());

  const json = '{"records":[{"name":"zipped"}]}';

  it.each([
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['br', brotliCompressSync(json)],
    ['gzip', Buffer.from(json)],
  ])('Content-Encoding: %s is 400 naming the coding, and nothing is created', async (coding, rawBody) => {
    const res = await rawCall(emu.url, 'POST', `${emu.base}/${recordsPath('crm', 'people')}`, {
      token: emu.apiKey, rawBody, headers: { 'content-encoding': coding },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`unsupported content-encoding "${coding}": send the body uncompressed`);
    expect(ok(await api('GET', recordsPath('crm', 'people'))).body.data).toEqual([]);
  });

  it('Content-Encoding: identity is no coding', async () => {
    const res = await rawCall(emu.url, 'POST', `${emu.base}/${recordsPath('crm', 'people')}`, {
      token: emu.apiKey, rawBody: json, headers: { 'content-encoding': 'identity' },
    });
    expect(res.status).toBe(201);
  });

  it('the CSV import refuses a content coding before reading the form', async () => {
    const res = await rawCall(emu.url, 'POST', `${emu.base}/${recordsPath('crm', 'people')}/import/csv`, {
      token: emu.apiKey,
      rawBody: gzipSync('--b\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nname\r\nx\r\n--b--\r\n'),
      headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-encoding': 'gzip' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('unsupported content-encoding "gzip": send the body uncompressed');
  });
});
