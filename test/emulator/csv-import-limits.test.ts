import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CSV_FILE_LIMIT_BYTES, RECORDS_PAYLOAD_LIMIT_BYTES } from '../../src/api/index.ts';
import { importPath, postCsv, rawUpload } from '../helpers/csv-upload.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, recordsPath } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * What the import refuses before or while reading the body: the key (401) and the table (404)
 * before a byte of it, a declared length that cannot fit (413) likewise, a file that grows past
 * 50 MiB (413) as soon as it does, without reading the rest. The JSON limit of the other routes
 * stays 6 MiB.
 */

let emu: RunningEmulator;
let ws: UpstreamWorkspace;
const BOUNDARY = 'wsmirror-test-boundary';

beforeAll(async () => {
  emu = await startEmulator();
  ws = new UpstreamWorkspace(emu);
  await ws.createModule('big');
  await ws.createTable('big', 'notes', {}, [field('text', 'string')]);
});
afterAll(() => emu.close());

const path = () => importPath(emu, 'big', 'notes');
const multipartHeaders = (token: string | null = emu.apiKey) => ({
  'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

/** A multipart body whose file part is `size` bytes of CSV: a header, then lines of 1 MiB text. */
function multipartBody(size: number): Readable {
  const head = Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="big.csv"\r\ncontent-type: text/csv\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const line = Buffer.from(`${'x'.repeat(1024 * 1024 - 1)}\n`);
  return Readable.from((function* () {
    yield head;
    let left = size;
    const header = Buffer.from('text\n');
    yield header;
    left -= header.length;
    while (left > 0) {
      const piece = left >= line.length ? line : Buffer.concat([line.subarray(0, left - 1), Buffer.from('\n')]);
      yield piece;
      left -= piece.length;
    }
    yield tail;
  })(), { objectMode: false });
}

const multipartLength = (size: number) =>
  Buffer.byteLength(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="big.csv"\r\ncontent-type: text/csv\r\n\r\n`) +
  size + Buffer.byteLength(`\r\n--${BOUNDARY}--\r\n`);

it('answers 401 before reading the body: a request that never sends it still gets its answer', async () => {
  const res = await rawUpload(emu, path(), multipartHeaders(null), undefined, 60 * 1024 * 1024);
  expect(res.status).toBe(401);
  expect(JSON.parse(res.body).error.message).toMatch(/API key/);
});

it('answers 404 for an unknown table, and 400 for a bad path, before reading the body', async () => {
  const missing = await rawUpload(emu, importPath(emu, 'big', 'nope'), multipartHeaders(), undefined, 1000);
  expect(missing.status).toBe(404);
  const bad = await rawUpload(emu, importPath(emu, 'big', 'Not-A-Name'), multipartHeaders(), undefined, 1000);
  expect(bad.status).toBe(400);
});

it('answers 413 before reading the body when the declared length cannot hold a file within the limit', async () => {
  const res = await rawUpload(emu, path(), multipartHeaders(), undefined, 200 * 1024 * 1024);
  expect(res.status).toBe(413);
  expect(JSON.parse(res.body).error.message).toContain(`at most ${CSV_FILE_LIMIT_BYTES} bytes`);
});

it('takes a file of exactly 50 MiB', async () => {
  const res = await rawUpload(emu, path(), multipartHeaders(), multipartBody(CSV_FILE_LIMIT_BYTES), multipartLength(CSV_FILE_LIMIT_BYTES));
  expect(res.status, res.body).toBe(200);
  expect(JSON.parse(res.body)).toEqual({ data: { rowsImported: 50, rowsUpdated: 0, rowsSkipped: 0 } });
}, 60_000);

it('answers 413 as soon as a streamed file passes 50 MiB, without reading the rest, and imports nothing', async () => {
  const before = (await ws.allRecords('big', 'notes')).length;
  const total = 400 * 1024 * 1024;
  // Chunked: no declared length, so only the file's growth can tell.
  const res = await rawUpload(emu, path(), multipartHeaders(), multipartBody(total));
  expect(res.status).toBe(413);
  expect(JSON.parse(res.body).error.message).toContain('file too large');
  expect(res.cutOff).toBe(true);
  expect(res.sent).toBeLessThan(total / 2);
  expect((await ws.allRecords('big', 'notes')).length).toBe(before);
}, 60_000);

it('a file one byte over the limit is 413, with its length declared', async () => {
  const size = CSV_FILE_LIMIT_BYTES + 1;
  const res = await rawUpload(emu, path(), multipartHeaders(), multipartBody(size), multipartLength(size));
  expect(res.status).toBe(413);
}, 60_000);

it('leaves the JSON limit of the other routes at 6 MiB, and multipart refused there', async () => {
  const api = apiOf(emu);
  const over = await api('POST', recordsPath('big', 'notes'), { records: [{ text: 'x'.repeat(RECORDS_PAYLOAD_LIMIT_BYTES) }] });
  expect(over.status).toBe(413);
  const form = await fetch(`${emu.url}${emu.base}/${recordsPath('big', 'notes')}`, {
    method: 'POST', body: new FormData(), headers: { authorization: `Bearer ${emu.apiKey}` },
  });
  expect(form.status).toBe(400);
});

it('refuses a body that is not multipart with 400, and an option part over 1 MiB', async () => {
  const json = await fetch(`${emu.url}${path()}`, {
    method: 'POST', body: '{}', headers: { authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json' },
  });
  expect(json.status).toBe(400);
  expect(((await json.json()) as any).error.message).toContain('send multipart/form-data');
  const long = await postCsv(emu, 'big', 'notes', 'text\nx\n', { mappings: 'x'.repeat(1024 * 1024 + 1) });
  expect(long.status).toBe(400);
  expect(long.body.error.message).toContain('form.mappings: longer than 1048576 bytes');
});

it('an import may spend the budget of a request on expressions, plus a share per row: a big file with cheap defaults passes', async () => {
  // About 75 steps per row: 40,000 rows spend 3 million steps, more than a request's 2 million.
  const cost = Array.from({ length: 15 }, (_, i) => `upper(text + "${i}")`).join(' + ');
  await ws.createTable('big', 'stamped', {}, [field('text', 'string'), field('derived', 'string', { defaultValue: { $nx: cost } })]);
  const rows = Array.from({ length: 40_000 }, (_, i) => `r${i}`);
  const res = await postCsv(emu, 'big', 'stamped', `text\n${rows.join('\n')}\n`, { batchSize: '10000' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data.rowsImported).toBe(40_000);
});

it('an import whose expressions cost more than that is 400 within a second or two, and changes nothing', async () => {
  await ws.createTable('big', 'costly', {}, [field('text', 'string')]);
  await ws.createRecords('big', 'costly', Array.from({ length: 100 }, () => ({ text: 'x' })));
  await ws.addFields('big', 'costly', [field('heavy', 'string', {
    defaultValue: { $nx: 'text(count(select costly where count(select costly where count(select costly) > 0) > 0))' },
  })]);
  const started = performance.now();
  const res = await postCsv(emu, 'big', 'costly', `text\n${Array.from({ length: 200 }, () => 'y').join('\n')}\n`);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.message).toContain('took more than');
  expect(performance.now() - started).toBeLessThan(2_500);
  expect(await ws.allRecords('big', 'costly')).toHaveLength(100);
});

it('a record over 8 Mi characters (a quote left open) is 400 saying so in characters only', async () => {
  const before = (await ws.allRecords('big', 'notes')).length;
  const res = await postCsv(emu, 'big', 'notes', `text\nshort\n"open${'x'.repeat(8 * 1024 * 1024)}\n`);
  expect(res.status).toBe(400);
  expect(res.body.error.message).toBe(
    'invalid CSV: the record starting on line 3 is longer than 8388608 characters (8 Mi): is a quote left open?',
  );
  expect((await ws.allRecords('big', 'notes')).length).toBe(before);
});
