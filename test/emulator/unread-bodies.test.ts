import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../src/api/index.ts';
import { importPath, rawUpload } from '../helpers/csv-upload.ts';
import { spawnEmulator, type EmulatorProcess } from '../helpers/processes.ts';
import { field, makeModule, makeTable, recordsPath } from '../helpers/schema.ts';

// An answer decided before the body is read (a wrong key, a body over the limit, an unknown
// table of a CSV import) arrives only if the client is not still sending when the connection
// closes: closing with a body unread makes the kernel reset the connection, and the client gets
// EPIPE or ECONNRESET instead of the answer. So the emulator reads the rest and drops it first,
// within bounds.

const MiB = 1024 * 1024;
const TRIES = 6;

/** The status a real Node fetch client gets, or the code of the error it gets instead. */
async function fetchStatus(url: string, init: RequestInit): Promise<number | string> {
  try {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return res.status;
  } catch (error) {
    const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
    return cause?.code ?? (error as Error).message;
  }
}

/** One request through node:http that sends its whole body, then reads the answer. */
function httpStatus(url: string, method: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number | string; connection?: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: error.code ?? error.message }));
    req.end(body);
  });
}

describe('an answer given before the body is read still reaches a client that sends it whole', () => {
  // A process of its own: the client must not share the emulator's event loop, or it could not
  // be sending while the emulator answers.
  let emu: EmulatorProcess;
  const records = () => `${emu.url}${emu.base}/${recordsPath('crm', 'people')}`;
  const big = (bytes: number) => JSON.stringify({ records: [{ name: 'x'.repeat(bytes) }] });

  beforeAll(async () => {
    emu = await spawnEmulator();
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
  });
  afterAll(() => emu.stop());

  it('a 7 MB body with a wrong key, from fetch: 401, every time', async () => {
    const body = big(7 * MiB);
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push(await fetchStatus(records(), {
        method: 'POST', body, headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      }));
    }
    expect(outcomes).toEqual(outcomes.map(() => 401));
  });

  it('a 7 MB body without a key, sent with Connection: close: 401, every time', async () => {
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push((await httpStatus(records(), 'POST', { 'content-type': 'application/json', connection: 'close' }, big(7 * MiB))).status);
    }
    expect(outcomes).toEqual(outcomes.map(() => 401));
  });

  it('a body over 6 MB sent with Connection: close: 413, every time', async () => {
    const body = big(RECORDS_PAYLOAD_LIMIT_BYTES + 512 * 1024);
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push((await httpStatus(records(), 'PATCH', {
        authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json', connection: 'close',
      }, body)).status);
    }
    expect(outcomes).toEqual(outcomes.map(() => 413));
  });

  it('a body over 6 MB from fetch: 413, every time', async () => {
    const body = big(RECORDS_PAYLOAD_LIMIT_BYTES + 512 * 1024);
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push(await fetchStatus(records(), {
        method: 'POST', body, headers: { authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json' },
      }));
    }
    expect(outcomes).toEqual(outcomes.map(() => 413));
  });

  it('a 7 MB body on the admin surface with an API key: 401, every time', async () => {
    const body = JSON.stringify({ name: 'm', labels: { '': 'x'.repeat(7 * MiB) } });
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      outcomes.push(await fetchStatus(`${emu.url}/_emulator/modules`, {
        method: 'POST', body, headers: { authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json', connection: 'close' },
      }));
    }
    expect(outcomes).toEqual(outcomes.map(() => 401));
  });

  it('a body read to its end leaves the connection open for the next request', async () => {
    const res = await httpStatus(records(), 'POST', { authorization: 'Bearer wrong', 'content-type': 'application/json' }, big(7 * MiB));
    expect(res).toEqual({ status: 401, connection: 'keep-alive' });
  });

  it.each([
    ['errorRate', 500],
    ['rateLimitRate', 429],
  ] as const)('an injected fault (%s) answers a 7 MB body sent with Connection: close: %i, every time', async (setting, status) => {
    const admin = (method: string, body?: unknown) =>
      fetch(`${emu.url}/_emulator/faults`, {
        method, headers: { authorization: `Bearer ${emu.adminToken}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await admin('PUT', { [setting]: 1, retryAfterSeconds: 0 })).status).toBe(200);
    try {
      const body = big(7 * MiB);
      const outcomes: (number | string)[] = [];
      for (let i = 0; i < TRIES; i++) {
        outcomes.push((await httpStatus(records(), 'POST', {
          authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json', connection: 'close',
        }, body)).status);
      }
      expect(outcomes).toEqual(outcomes.map(() => status));
    } finally {
      await admin('DELETE');
    }
  });

  describe('the CSV import', () => {
    const form = (size: number) => {
      const head = Buffer.from('--b\r\ncontent-disposition: form-data; name="file"; filename="a.csv"\r\ncontent-type: text/csv\r\n\r\nname\n');
      return Buffer.concat([head, Buffer.alloc(size, 'x'), Buffer.from('\n\r\n--b--\r\n')]);
    };
    const send = (path: string, token: string) =>
      rawUpload(emu, path, { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=b' }, Readable.from([form(20 * MiB)]), form(20 * MiB).length);

    it('a 20 MB upload with a wrong key: 401, every time', async () => {
      const outcomes: (number | undefined)[] = [];
      for (let i = 0; i < 3; i++) outcomes.push((await send(importPath(emu, 'crm', 'people'), 'wrong')).status);
      expect(outcomes).toEqual([401, 401, 401]);
    });

    it('a 20 MB upload to an unknown table: 404, every time', async () => {
      const outcomes: (number | undefined)[] = [];
      for (let i = 0; i < 3; i++) outcomes.push((await send(importPath(emu, 'crm', 'nope'), emu.apiKey)).status);
      expect(outcomes).toEqual([404, 404, 404]);
    });
  });

  describe('within bounds', () => {
    /** Sends the head of a request and `bytes` of its body, then nothing: the answer and how long it took. */
    function stalled(path: string, declared: number, bytes: number): Promise<{ status: number; ms: number; closed: boolean }> {
      const { hostname, port } = new URL(emu.url);
      return new Promise((resolve, reject) => {
        const started = performance.now();
        const socket = connect({ host: hostname, port: Number(port) });
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
        socket.on('error', reject);
        socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ms: performance.now() - started, closed: true }));
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
        socket.write(Buffer.alloc(bytes, 0x20));
      });
    }

    it('a client that stops sending gets its answer after a second without data, and the connection closes', async () => {
      const res = await stalled(`${emu.base}/${recordsPath('crm', 'people')}`, 7 * MiB, 1 * MiB);
      expect(res.status).toBe(401);
      expect(res.ms).toBeGreaterThan(900);
      expect(res.ms).toBeLessThan(5000);
    });

    it('a body announced over 64 MiB is not waited for: the answer comes at once, and the connection closes', async () => {
      const res = await stalled(`${emu.base}/${recordsPath('crm', 'people')}`, 65 * MiB, 0);
      expect(res.status).toBe(401);
      expect(res.ms).toBeLessThan(900);
    });
  });
});
