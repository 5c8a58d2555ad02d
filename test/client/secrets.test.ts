import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkspaceClient, type RequestInfo } from '../../src/client/index.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import {
  WORKSPACE_ID, WORKSPACE_OK, drop, hang, json, raw, startFakeUpstream, type Behaviour, type FakeUpstream,
} from './fake-upstream.ts';

// Shaped like an identifier on purpose: it can then turn up in a zod issue path unquoted.
const KEY = 'sk_live_TopSecret_9f8e7d6c5b4a';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Echoes the Authorization header back the way a careless upstream or proxy might. */
function echo(shape: (auth: string) => Behaviour): Behaviour {
  return (req, res, seen) => shape(String(req.headers.authorization))(req, res, seen);
}

interface Harness {
  fake: FakeUpstream;
  client: WorkspaceClient;
  logLines: string[];
  infos: RequestInfo[];
}

async function harness(behaviours: Behaviour[], timeoutMs = 2000): Promise<Harness> {
  const fake = await startFakeUpstream(behaviours);
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const infos: RequestInfo[] = [];
  const client = new WorkspaceClient({
    baseUrl: fake.url, apiKey: KEY, workspaceId: WORKSPACE_ID, retryBaseMs: 1, retryMaxMs: 2, maxRetries: 1, timeoutMs,
    logger: pino({ level: 'trace' }, sink), onRequest: (info) => infos.push(info),
  });
  cleanups.push(() => fake.close(), () => client.close());
  return { fake, client, logLines, infos };
}

/** Everything an error can show: message, stack, own properties, cause chain. */
function everything(err: unknown): string {
  const props = err && typeof err === 'object' ? JSON.stringify({ ...err }) : '';
  return [String(err), (err as Error).stack ?? '', props, inspect(err, { depth: null, showHidden: true })].join('\n');
}

describe('the API key never leaks', () => {
  const cases: Array<[string, Behaviour[]]> = [
    ['an error message echoing the header', [echo((auth) => json(400, { error: { message: `bad key ${auth}` } }))]],
    ['a retried 5xx echoing the header', [echo((auth) => json(500, { error: { message: `trace: ${auth}` } }))]],
    ['a non-JSON error page echoing the header', [echo((auth) => raw(502, `<pre>Authorization: ${auth}</pre>`))]],
    ['a non-JSON 200 echoing the header', [echo((auth) => raw(200, `Authorization: ${auth}`))]],
    ['a schema break whose issue path holds the key', [json(200, {
      data: { name: 'x', modules: [{ id: 'm', name: 'crm', tables: [], labels: { [KEY]: 42 } }] },
    })]],
    ['a dropped connection', [drop]],
  ];

  it.each(cases)('not in the error, the logs or the metrics hook: %s', async (_name, behaviours) => {
    const { fake, client, logLines, infos } = await harness(behaviours);
    const err = await rejectionOf(client.getWorkspace());
    // The key did go out, as the bearer credential.
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(logLines.length).toBeGreaterThan(0);
    expect(everything(err)).not.toContain(KEY);
    for (const line of logLines) expect(line).not.toContain(KEY);
    expect(JSON.stringify(infos)).not.toContain(KEY);
  });

  it('not in a timeout', async () => {
    const { client, logLines } = await harness([hang], 100);
    const err = await rejectionOf(client.getWorkspace());
    expect((err as { timeout: boolean }).timeout).toBe(true);
    expect(everything(err)).not.toContain(KEY);
    for (const line of logLines) expect(line).not.toContain(KEY);
  });

  it('is shown as [Redacted] where the upstream echoed it', async () => {
    const { client } = await harness([echo((auth) => json(400, { error: { message: `bad key ${auth}` } }))]);
    const err = (await rejectionOf(client.getWorkspace())) as { upstreamMessage: string };
    expect(err.upstreamMessage).toBe('bad key Bearer [Redacted]');
  });

  it('not in the error for an invalid key option', () => {
    const badKey = `${KEY}\nX-Injected: 1`;
    let err: unknown;
    try {
      new WorkspaceClient({ baseUrl: 'http://127.0.0.1:1', apiKey: badKey, workspaceId: WORKSPACE_ID });
    } catch (e) {
      err = e;
    }
    expect(String(err)).toContain('apiKey');
    expect(everything(err)).not.toContain(KEY);
  });

  it('successful calls log no header either', async () => {
    const { client, logLines } = await harness([json(200, WORKSPACE_OK)]);
    await client.getWorkspace();
    expect(logLines.join('')).toContain('getWorkspace');
    expect(logLines.join('')).not.toContain(KEY);
  });
});

describe('no part of the API key shows in an excerpt of a body that is not JSON', () => {
  // The excerpt is 200 characters: the key starts a few characters before its end.
  const near200 = `${'x'.repeat(186)} token=`;
  // The start of the body that is read for a message ends inside the key, after a run of
  // whitespace that the excerpt shows as one space.
  const atEndOfWhatIsRead = (limit: number) => `${' '.repeat(limit - 10)}key: ${KEY}`;
  const cases: Array<[string, Behaviour]> = [
    ['an error page, `token=<key>` across character 200', raw(502, `${near200}${KEY} more text after it`)],
    ['an error page, `key: <key>` across character 200', raw(502, `${'y'.repeat(188)} key: ${KEY}`)],
    ['a 200 that is not JSON, `token=<key>` across character 200', raw(200, `${near200}${KEY} and more`)],
    ['an error page cut after 800 bytes inside the key', raw(502, atEndOfWhatIsRead(800))],
    ['an error page cut after 16 KiB inside the key', raw(502, atEndOfWhatIsRead(16 * 1024))],
    ['a 200 cut after 800 characters inside the key', raw(200, atEndOfWhatIsRead(800))],
  ];

  it.each(cases)('%s', async (_name, behaviour) => {
    const { client, logLines } = await harness([behaviour]);
    const err = await rejectionOf(client.getWorkspace());
    const shown = [everything(err), ...logLines].join('\n');
    expect(String(err)).toMatch(/not JSON|token=|key:/);
    // Not even its first characters.
    expect(shown).not.toContain(KEY.slice(0, 4));
  });

  it('says [Redacted] where the key was', async () => {
    const { client } = await harness([raw(502, `${near200}${KEY} more text after it`)]);
    const err = (await rejectionOf(client.getWorkspace())) as { upstreamMessage: string };
    expect(err.upstreamMessage).toContain('token=[Redacted]');
  });
});
