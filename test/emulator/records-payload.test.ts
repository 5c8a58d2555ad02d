import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../src/api/index.ts';
import { request as httpRequest } from 'node:http';
import { call } from '../helpers/emulator.ts';
import { spawnEmulator } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { MODULE, allRecords, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

// Records create and update bodies: at most 6 MB (6 MiB, 6,291,456 bytes); above that 413.

let fx: RecordsFixture;
let existing: string;

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'blobs', { hasHistory: true }, [field('s', 'string')]);
  existing = (await fx.ws.createRecords(MODULE, 'blobs', [{ s: 'first' }]))[0]!;
});
afterAll(() => fx.emu.close());

/** A JSON body of exactly `bytes` bytes: `{"records":[{"s":"xxx…"}]}` (plus `id` for updates). */
function bodyOf(bytes: number, id?: string): string {
  const head = id === undefined ? '{"records":[{"s":"' : `{"records":[{"id":"${id}","s":"`;
  const tail = '"}]}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

async function send(method: string, rawBody: string) {
  return call(fx.emu.url, method, `${fx.emu.base}/${fx.records('blobs')}`, { token: fx.emu.apiKey, rawBody });
}

async function state() {
  const changes = await fx.api('GET', `${fx.records('blobs')}/changes?since=2000-01-01T00:00:00Z`);
  return { records: await allRecords(fx, 'blobs'), changes: changes.body.data };
}

describe('records payload limit', () => {
  it('is 6 MiB', () => {
    expect(RECORDS_PAYLOAD_LIMIT_BYTES).toBe(6_291_456);
  });

  it('creates from a body of exactly the limit and of the limit minus a bit', async () => {
    for (const bytes of [RECORDS_PAYLOAD_LIMIT_BYTES, RECORDS_PAYLOAD_LIMIT_BYTES - 1000]) {
      const body = bodyOf(bytes);
      expect(Buffer.byteLength(body)).toBe(bytes);
      const res = await send('POST', body);
      expect(res.status).toBe(201);
      expect(res.body.data.ids).toHaveLength(1);
    }
  });

  it('updates from a body of just under the limit', async () => {
    const res = await send('PATCH', bodyOf(RECORDS_PAYLOAD_LIMIT_BYTES - 10, existing));
    expect(res.status).toBe(200);
  });

  it('answers 413 with the error body to a create or update one byte over, and changes nothing', async () => {
    const before = await state();
    for (const [method, body] of [
      ['POST', bodyOf(RECORDS_PAYLOAD_LIMIT_BYTES + 1)],
      ['PATCH', bodyOf(RECORDS_PAYLOAD_LIMIT_BYTES + 1, existing)],
      ['POST', bodyOf(RECORDS_PAYLOAD_LIMIT_BYTES * 2)],
    ] as const) {
      const res = await send(method, body);
      expect(res.status, method).toBe(413);
      expect(res.body).toEqual({ error: { message: expect.stringContaining('payload too large') } });
    }
    expect(await state()).toEqual(before);
  });

  it('checks auth before the size: 401 without a key even for an oversized body', async () => {
    const res = await call(fx.emu.url, 'POST', `${fx.emu.base}/${fx.records('blobs')}`, {
      rawBody: bodyOf(RECORDS_PAYLOAD_LIMIT_BYTES + 1),
    });
    expect(res.status).toBe(401);
  });
});

describe('records payload limit, from another process', () => {
  /** One oversized PATCH sent as most clients send it: the whole body, then the answer. */
  function sendOversized(url: string, path: string, apiKey: string, body: string): Promise<number | string> {
    return new Promise((resolve) => {
      const req = httpRequest(`${url}${path}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end(body);
    });
  }

  it('the 413 always reaches the client: the connection is not reset under a body still being sent', async () => {
    // Closing at once with most of the body unread makes the kernel reset the connection, which
    // loses the answer (EPIPE/ECONNRESET on the client) about half the time.
    const emu = await spawnEmulator();
    try {
      await call(emu.url, 'POST', '/_emulator/modules', { token: emu.adminToken, body: { name: 'm' } });
      await call(emu.url, 'POST', `${emu.base}/modules/m/tables`, { token: emu.apiKey, body: { name: 't' } });
      const body = JSON.stringify({ records: [{ id: 1, s: 'x'.repeat(RECORDS_PAYLOAD_LIMIT_BYTES + 512 * 1024) }] });
      const outcomes: (number | string)[] = [];
      for (let i = 0; i < 12; i++) outcomes.push(await sendOversized(emu.url, `${emu.base}/modules/m/tables/t/records`, emu.apiKey, body));
      expect(outcomes).toEqual(outcomes.map(() => 413));
    } finally {
      await emu.stop();
    }
  });
});
