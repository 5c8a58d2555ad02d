import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, UpstreamError, WorkspaceClient, type RequestInfo, type WorkspaceClientOptions } from '../../src/client/index.ts';
import { freePort } from '../helpers/free-port.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import {
  WORKSPACE_ID, WORKSPACE_OK, drop, errorBody, json, startFakeUpstream, type Behaviour, type FakeUpstream,
} from './fake-upstream.ts';

const KEY = 'retry-test-key-0123456789';
const CREATED = json(201, { data: { ids: ['1'] } });
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function upstream(handler: Behaviour[] | ((seen: never, index: number) => Behaviour)): Promise<FakeUpstream> {
  const fake = await startFakeUpstream(handler as Behaviour[]);
  cleanups.push(() => fake.close());
  return fake;
}

function clientFor(url: string, extra: Partial<WorkspaceClientOptions> = {}): WorkspaceClient {
  const client = new WorkspaceClient({
    baseUrl: url, apiKey: KEY, workspaceId: WORKSPACE_ID, retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 2000, ...extra,
  });
  cleanups.push(() => client.close());
  return client;
}

describe('requests', () => {
  it('sends the bearer key to the endpoint path under the base URL prefix', async () => {
    const fake = await upstream([json(200, WORKSPACE_OK)]);
    const client = clientFor(`${fake.url}/upstream/`);
    expect(await client.getWorkspace()).toEqual({ name: 'Acme', modules: [] });
    expect(fake.requests).toHaveLength(1);
    const [req] = fake.requests;
    expect(req!.method).toBe('GET');
    expect(req!.path).toBe(`/upstream/api/v1/workspace/${WORKSPACE_ID}`);
    expect(req!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('keeps the connection alive between requests', async () => {
    const fake = await upstream([json(200, WORKSPACE_OK)]);
    const client = clientFor(fake.url);
    for (let i = 0; i < 10; i++) await client.getWorkspace();
    expect(fake.requests).toHaveLength(10);
    // undici's pool may open a second socket while the first is finishing a response; no more.
    expect(fake.connections).toBeLessThanOrEqual(2);
  });

  it('sends JSON bodies and encodes list queries', async () => {
    const fake = await upstream([json(200, { data: [], page_info: { has_more: false, limit: 5, offset: 10 } }), CREATED]);
    const client = clientFor(fake.url);
    await client.listRecords('crm', 'deals', { fields: ['name', 'price'], filter: { stage: ['won', 'lost'] }, sort: '-name', limit: 5, offset: 10 });
    await client.createRecords('crm', 'deals', [{ name: 'A' }]);
    const [list, create] = fake.requests;
    expect(list!.path).toBe(`/api/v1/workspace/${WORKSPACE_ID}/modules/crm/tables/deals/records`);
    expect(Object.fromEntries(list!.query)).toEqual({
      fields: 'name,price', filter: '{"stage":["won","lost"]}', sort: '-name', limit: '5', offset: '10',
    });
    expect(create!.method).toBe('POST');
    expect(create!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(create!.body)).toEqual({ records: [{ name: 'A' }] });
  });
});

describe('retries', () => {
  it('retries 5xx and reports every attempt to onRequest', async () => {
    const fake = await upstream([errorBody(500, 'boom'), errorBody(502, 'bad gateway'), json(200, WORKSPACE_OK)]);
    const seen: RequestInfo[] = [];
    const client = clientFor(fake.url, { onRequest: (info) => seen.push(info) });
    await client.getWorkspace();
    expect(fake.requests).toHaveLength(3);
    expect(seen.map((i) => [i.endpoint, i.method, i.status, i.attempt, i.willRetry])).toEqual([
      ['getWorkspace', 'GET', 500, 1, true],
      ['getWorkspace', 'GET', 502, 2, true],
      ['getWorkspace', 'GET', 200, 3, false],
    ]);
    expect(seen.every((i) => i.durationMs >= 0)).toBe(true);
  });

  it.each([
    [400, 'UPSTREAM_BAD_REQUEST'],
    [401, 'UPSTREAM_UNAUTHORIZED'],
    [404, 'UPSTREAM_NOT_FOUND'],
    [413, 'UPSTREAM_PAYLOAD_TOO_LARGE'],
  ])('does not retry %i and reports it as %s with the upstream message', async (status, code) => {
    const fake = await upstream([errorBody(status, `reason ${status}`), json(200, WORKSPACE_OK)]);
    const err = await rejectionOf(clientFor(fake.url).getTable('crm', 'deals'));
    expect(fake.requests).toHaveLength(1);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.upstreamMessage).toBe(`reason ${status}`);
    expect(err.endpoint).toBe('getTable');
    expect(err.message).toContain(`reason ${status}`);
    expect(err.message).toContain('getTable');
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const fake = await upstream([errorBody(503, 'down')]);
    const err = await rejectionOf(clientFor(fake.url, { maxRetries: 3 }).getWorkspace());
    expect(fake.requests).toHaveLength(4);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe('UPSTREAM_SERVER_ERROR');
    expect(err.attempts).toBe(4);
  });

  it("retry: 'never' makes one attempt", async () => {
    const fake = await upstream([errorBody(503, 'down'), json(200, WORKSPACE_OK)]);
    const err = await rejectionOf(clientFor(fake.url).getWorkspace({ retry: 'never' }));
    expect(err.code).toBe('UPSTREAM_SERVER_ERROR');
    expect(fake.requests).toHaveLength(1);
  });

  it('keeps each backoff under retryMaxMs', async () => {
    const fake = await upstream([errorBody(500, 'x'), errorBody(500, 'x'), errorBody(500, 'x'), json(200, WORKSPACE_OK)]);
    // A huge base is capped by the ceiling: without the cap the third retry would wait ~40 s.
    await clientFor(fake.url, { retryBaseMs: 10_000, retryMaxMs: 30 }).getWorkspace();
    const gaps = fake.requests.slice(1).map((r, i) => r.at - fake.requests[i]!.at);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) expect(gap).toBeLessThan(500);
  });

  it('waits at least Retry-After seconds on 429', async () => {
    const fake = await upstream([errorBody(429, 'slow down', { 'retry-after': '1' }), json(200, WORKSPACE_OK)]);
    const started = Date.now();
    await clientFor(fake.url).getWorkspace();
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.at - fake.requests[0]!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('understands Retry-After as an HTTP date', async () => {
    const fake = await upstream([
      (req, res, seen) => errorBody(503, 'maintenance', { 'retry-after': new Date(Date.now() + 2000).toUTCString() })(req, res, seen),
      json(200, WORKSPACE_OK),
    ]);
    await clientFor(fake.url).getWorkspace();
    expect(fake.requests).toHaveLength(2);
    // The date has whole seconds, so the wait is between 1 and 2 s.
    expect(fake.requests[1]!.at - fake.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('does not sleep through a Retry-After beyond retryAfterMaxMs: fails with the delay attached', async () => {
    const fake = await upstream([errorBody(429, 'come back tomorrow', { 'retry-after': '86400' }), json(200, WORKSPACE_OK)]);
    const started = Date.now();
    const err = await rejectionOf(clientFor(fake.url, { retryAfterMaxMs: 10_000 }).getWorkspace());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
    expect(err.code).toBe('UPSTREAM_RATE_LIMITED');
    expect(err.retryAfterMs).toBe(86_400_000);
  });

  it('holds back other requests while a Retry-After runs', async () => {
    const fake = await upstream((_seen, index) =>
      index === 0 ? errorBody(429, 'slow down', { 'retry-after': '1' }) : json(200, WORKSPACE_OK));
    const client = clientFor(fake.url);
    const first = client.getWorkspace();
    await new Promise((r) => setTimeout(r, 150));
    const started = Date.now();
    await client.getWorkspace();
    // The second call started after the 429 arrived and still waited for its end.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    await first;
  });

  it('retries a dropped connection on GET', async () => {
    const fake = await upstream([drop, drop, json(200, WORKSPACE_OK)]);
    const seen: RequestInfo[] = [];
    await clientFor(fake.url, { onRequest: (i) => seen.push(i) }).getWorkspace();
    expect(fake.requests).toHaveLength(3);
    expect(seen.map((i) => i.status)).toEqual(['network', 'network', 200]);
  });

  it('retries a dropped connection on PATCH and DELETE', async () => {
    const fake = await upstream([drop, json(200, { data: { updatedIds: ['1'] } }), drop, json(200, { data: { deletedIds: ['1'] } })]);
    const client = clientFor(fake.url);
    expect(await client.updateRecords('crm', 'deals', [{ id: 1, name: 'B' }])).toEqual({ updatedIds: ['1'] });
    expect(await client.deleteRecords('crm', 'deals', [1])).toEqual({ deletedIds: ['1'] });
    expect(fake.requests.map((r) => r.method)).toEqual(['PATCH', 'PATCH', 'DELETE', 'DELETE']);
  });
});

describe('POST retries (creates must not be duplicated)', () => {
  it('does not repeat a POST whose connection dropped after it was sent', async () => {
    const fake = await upstream([drop, CREATED]);
    const err = await rejectionOf(clientFor(fake.url).createRecords('crm', 'deals', [{ name: 'A' }]));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.code).toBe('NETWORK');
    expect(fake.requests).toHaveLength(1);
  });

  it('does not repeat a POST answered 500', async () => {
    const fake = await upstream([errorBody(500, 'maybe'), CREATED]);
    const err = await rejectionOf(clientFor(fake.url).createRecords('crm', 'deals', [{ name: 'A' }]));
    expect(err.code).toBe('UPSTREAM_SERVER_ERROR');
    expect(fake.requests).toHaveLength(1);
  });

  it.each([429, 503])('repeats a POST turned away with %i', async (status) => {
    const fake = await upstream([errorBody(status, 'not now'), CREATED]);
    expect(await clientFor(fake.url).createRecords('crm', 'deals', [{ name: 'A' }])).toEqual({ ids: ['1'] });
    expect(fake.requests).toHaveLength(2);
  });

  it("repeats a dropped POST with retry: 'always'", async () => {
    const fake = await upstream([drop, CREATED]);
    await clientFor(fake.url).createRecords('crm', 'deals', [{ name: 'A' }], { retry: 'always' });
    expect(fake.requests).toHaveLength(2);
  });

  it('repeats a POST whose connection was refused (nothing was sent)', async () => {
    const port = await freePort();
    let fake: FakeUpstream | undefined;
    let starting: Promise<void> | undefined;
    const client = clientFor(`http://127.0.0.1:${port}`, {
      retryBaseMs: 200, retryMaxMs: 200, maxRetries: 10,
      onRequest: (info) => {
        // Bring the upstream up once the first attempt has been refused.
        if (info.status === 'network' && !starting) {
          starting = startFakeUpstream([CREATED], port).then((f) => {
            fake = f;
            cleanups.push(() => f.close());
          });
        }
      },
    });
    expect(await client.createRecords('crm', 'deals', [{ name: 'A' }])).toEqual({ ids: ['1'] });
    expect(fake!.requests).toHaveLength(1);
  });

  it('reports a refused connection as NETWORK with its system code', async () => {
    const port = await freePort();
    const err = await rejectionOf(clientFor(`http://127.0.0.1:${port}`, { maxRetries: 2 }).getWorkspace());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.causeCode).toBe('ECONNREFUSED');
    expect(err.attempts).toBe(3);
    expect(err.timeout).toBe(false);
  });
});

describe('cancellation and concurrency', () => {
  it('a caller signal cuts a backoff short', async () => {
    const fake = await upstream([errorBody(503, 'down', { 'retry-after': '30' })]);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => controller.abort(reason), 100);
    const started = Date.now();
    const err = await rejectionOf(clientFor(fake.url).getWorkspace({ signal: controller.signal }));
    expect(err).toBe(reason);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('never has more than `concurrency` requests in flight', async () => {
    const fake = await upstream([json(200, WORKSPACE_OK, {}, 40)]);
    const client = clientFor(fake.url, { concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => client.getWorkspace()));
    expect(fake.requests).toHaveLength(12);
    expect(fake.maxInFlight).toBe(3);
  });
});
