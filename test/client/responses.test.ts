import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidResponseError, NetworkError, UpstreamError, WorkspaceClient, type WorkspaceClientOptions,
} from '../../src/client/index.ts';
import { ConfigError } from '../../src/errors.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import {
  WORKSPACE_ID, WORKSPACE_OK, dropMidBody, endlessBody, hang, json, raw, stallMidBody, startFakeUpstream,
  type Behaviour,
} from './fake-upstream.ts';

const KEY = 'responses-test-key-0123456789';
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(behaviours: Behaviour[], extra: Partial<WorkspaceClientOptions> = {}) {
  const fake = await startFakeUpstream(behaviours);
  const client = new WorkspaceClient({
    baseUrl: fake.url, apiKey: KEY, workspaceId: WORKSPACE_ID, retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 2000, ...extra,
  });
  cleanups.push(() => fake.close(), () => client.close());
  return { fake, client };
}

describe('timeouts', () => {
  it('times out a request that gets no answer, and retries it', async () => {
    const attempts: number[] = [];
    const { fake, client } = await setup([hang], { timeoutMs: 150, maxRetries: 1, onRequest: (info) => attempts.push(info.attempt) });
    const started = Date.now();
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('NETWORK');
    expect(err.timeout).toBe(true);
    expect(err.message).toContain('150 ms');
    // Counted where the client sends: on a busy machine the retry's bytes can reach the fake
    // server after the client has already given up on them.
    expect(attempts).toEqual([1, 2]);
    expect(fake.requests.length).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('times out a body that stalls half-way', async () => {
    const { client } = await setup([stallMidBody], { timeoutMs: 200, maxRetries: 0 });
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.timeout).toBe(true);
  });

  it('recovers when a retry answers in time', async () => {
    const { client } = await setup([hang, json(200, WORKSPACE_OK)], { timeoutMs: 150 });
    expect(await client.getWorkspace()).toEqual(WORKSPACE_OK.data);
  });
});

describe('dropped connections', () => {
  it('retries a body cut off mid-way on GET', async () => {
    const { fake, client } = await setup([dropMidBody, json(200, WORKSPACE_OK)]);
    expect(await client.getWorkspace()).toEqual(WORKSPACE_OK.data);
    expect(fake.requests).toHaveLength(2);
  });

  it('fails with NETWORK when every attempt is cut off', async () => {
    const { fake, client } = await setup([dropMidBody], { maxRetries: 2 });
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.timeout).toBe(false);
    expect(fake.requests).toHaveLength(3);
  });
});

describe('responses that must not pass', () => {
  it('rejects a body over maxResponseBytes announced by Content-Length, without retrying', async () => {
    const big = { data: { name: 'x'.repeat(5000), modules: [] } };
    const { fake, client } = await setup([json(200, big)], { maxResponseBytes: 1024 });
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.code).toBe('INVALID_RESPONSE');
    expect(err.reason).toBe('too-large');
    expect(fake.requests).toHaveLength(1);
  });

  it('stops reading an endless chunked body at the bound', async () => {
    const { client } = await setup([endlessBody], { maxResponseBytes: 256 * 1024, timeoutMs: 10_000 });
    const started = Date.now();
    const err = await rejectionOf(client.getWorkspace());
    expect(err.reason).toBe('too-large');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('accepts a body just under the bound', async () => {
    const body = { data: { name: 'x'.repeat(980), modules: [] } };
    const { client } = await setup([json(200, body)], { maxResponseBytes: 1024 });
    expect((await client.getWorkspace()).name).toHaveLength(980);
  });

  it('rejects a 200 that is not JSON', async () => {
    const { fake, client } = await setup([raw(200, '<html>maintenance</html>', { 'content-type': 'text/html' })]);
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('not-json');
    expect(err.message).toContain('<html>maintenance</html>');
    expect(fake.requests).toHaveLength(1);
  });

  it('says a compressed (binary) body is binary, with its encoding and type, and shows none of its bytes', async () => {
    const body = gzipSync(JSON.stringify({ data: { name: 'Acme', modules: [] } }));
    const gzipped = (status: number): Behaviour => (_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
    };
    for (const status of [200, 400]) {
      const { client } = await setup([gzipped(status)]);
      const err = await rejectionOf(client.getWorkspace());
      expect(err.message).toContain(`a binary body of ${body.length} bytes (content-encoding gzip, content-type application/json)`);
      // Printable text only: no replacement characters, no control characters.
      expect(err.message).not.toMatch(/[\uFFFD\u0000-\u0008\u000E-\u001F\u007F]/);
    }
  });

  it('rejects an empty 200', async () => {
    const { client } = await setup([raw(200, '')]);
    const err = await rejectionOf(client.getWorkspace());
    expect(err.reason).toBe('not-json');
    expect(err.message).toContain('empty body');
  });

  it('rejects a 200 that breaks the schema, naming the place at fault', async () => {
    const { client } = await setup([json(200, { data: { name: 'Acme', modules: [{ id: 'm1', name: 'crm', tables: 'none' }] } })]);
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('schema');
    expect(err.message).toContain('response.data.modules[0].tables');
  });

  it('rejects a record page whose ids are not numeric', async () => {
    const page = { data: [{ id: 'abc', values: {} }], page_info: { has_more: false, limit: 100, offset: 0 } };
    const { client } = await setup([json(200, page)]);
    const err = await rejectionOf(client.listRecords('crm', 'deals'));
    expect(err.message).toContain('response.data[0].id');
  });

  it('reports a non-JSON error page by an excerpt', async () => {
    const { client } = await setup([raw(502, '<html><body>Bad   gateway</body></html>')], { maxRetries: 0 });
    const err = await rejectionOf(client.getWorkspace());
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.status).toBe(502);
    expect(err.upstreamMessage).toBe('<html><body>Bad gateway</body></html>');
  });

  it('reports an unexpected status such as a redirect without retrying', async () => {
    const { fake, client } = await setup([raw(302, '', { location: '/elsewhere' })]);
    const err = await rejectionOf(client.getWorkspace());
    expect(err.code).toBe('UPSTREAM_HTTP_ERROR');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('options', () => {
  it.each([
    [{ baseUrl: 'ftp://example.com' }, 'baseUrl'],
    [{ baseUrl: 'not a url' }, 'baseUrl'],
    [{ workspaceId: 'short' }, 'workspaceId'],
    [{ apiKey: '' }, 'apiKey'],
    [{ concurrency: 0 }, 'concurrency'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
  ])('rejects %j naming %s', (override, name) => {
    const make = () => new WorkspaceClient({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, workspaceId: WORKSPACE_ID, ...override });
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(name);
  });
});
