import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

// A records page may be larger than one JavaScript string can hold (about 512 Mi characters):
// 100 records of 6 MB each. It is served whole, as any other page.

let fx: RecordsFixture;

// A control character: one in the stored text, six (`\u0001`) in JSON. 99 copies of 10,000 of them
// make a function field value of 990,000 characters (texts may have 1,000,000), 5.94 MB of JSON.
const CHUNK = '\u0001'.repeat(10_000);
const COPIES = 99;
const RECORDS = 100;

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'huge', {}, [
    field('s', 'string'),
    field('big', 'function', { expression: `concat(${Array.from({ length: COPIES }, () => 's').join(', ')})` }),
  ]);
  await fx.ws.createRecords(MODULE, 'huge', Array.from({ length: RECORDS }, () => ({ s: CHUNK })));
});
afterAll(() => fx.emu.close());

/** The status, headers, length and SHA-256 of a response, read as a stream (the test holds no more of it). */
function fetchDigest(path: string): Promise<{ status: number; type: string | undefined; bytes: number; sha256: string }> {
  const { hostname, port } = new URL(fx.emu.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers: { authorization: `Bearer ${fx.emu.apiKey}` } }, (res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
      });
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], bytes, sha256: hash.digest('hex') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a records page too large for one string', () => {
  it('is served whole (200), exactly the JSON a smaller page would be', async () => {
    const ids = (await fx.api('GET', `${fx.records('huge')}?fields=id`)).body.data.map((r: any) => r.id);
    expect(ids).toHaveLength(RECORDS);

    const got = await fetchDigest(`${fx.emu.base}/${fx.records('huge')}?limit=100`);
    expect(got.status).toBe(200);
    expect(got.type).toBe('application/json; charset=utf-8');

    // The expected body, piece by piece: one string would be too long here too.
    const expected = createHash('sha256');
    let bytes = 0;
    const add = (text: string) => {
      expected.update(text);
      bytes += Buffer.byteLength(text);
    };
    const s = JSON.stringify(CHUNK);
    const big = JSON.stringify(CHUNK.repeat(COPIES));
    add('{"data":[');
    ids.forEach((id: string, i: number) => add(`${i === 0 ? '' : ','}{"id":${JSON.stringify(id)},"values":{"s":${s},"big":${big}}}`));
    add('],"page_info":{"has_more":false,"limit":100,"offset":0}}');
    expect(bytes).toBeGreaterThan(2 ** 29);
    expect(got.bytes).toBe(bytes);
    expect(got.sha256).toBe(expected.digest('hex'));
  });
});
