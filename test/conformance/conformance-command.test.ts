import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConformanceReport } from '../../src/conformance/index.ts';
import { runWsmirror, spawnEmulator, type EmulatorProcess } from '../helpers/processes.ts';
import { startHoldingProxy, type HoldingProxy } from '../helpers/holding-proxy.ts';
import { startRewritingProxy, type RewritingProxy, type Rewrite } from '../helpers/rewriting-proxy.ts';

/**
 * `wsmirror conformance` as a user runs it: a real process against `wsmirror emulator` started as
 * another process, through a proxy that breaks one rule at a time, and killed mid-run.
 */
const MODULE = 'scratch';
// Tables of the module that the suite must never touch: one plain, one that only looks like a scratch table.
const FOREIGN = ['keep_me', 'wsmconf_notarun_x'];

let emu: EmulatorProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wsmirror-conformance-'));
  const seed = join(dir, 'seed.json');
  writeFileSync(seed, JSON.stringify({
    modules: [{ name: MODULE, tables: FOREIGN.map((name) => ({ name, fields: [{ name: 'f', type: 'string', labels: { '': 'f' } }] })) }],
  }));
  emu = await spawnEmulator({ args: ['--seed', seed] });
});
afterAll(async () => {
  await emu?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function envFor(url: string): Record<string, string> {
  return { WSMIRROR_BASE_URL: url, WSMIRROR_API_KEY: emu.apiKey, WSMIRROR_WORKSPACE_ID: emu.workspaceId, WSMIRROR_LOG_LEVEL: 'warn' };
}

async function tableNames(): Promise<string[]> {
  const res = await fetch(`${emu.url}${emu.base}/modules/${MODULE}/tables`, { headers: { authorization: `Bearer ${emu.apiKey}` } });
  return ((await res.json()) as { data: { name: string }[] }).data.map((t) => t.name).sort();
}

function conformance(url: string, ...args: string[]) {
  return runWsmirror(['conformance', '--module', MODULE, '--rate', '0', ...args], envFor(url), { killAfterMs: 120_000 });
}

describe('wsmirror conformance against the emulator process', { timeout: 120_000 }, () => {
  it('passes every check, reports observations as the emulator documents them, and leaves the module as it was', async () => {
    const run = await conformance(emu.url, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(report.failed).toBe(0);
    expect(report.passed).toBeGreaterThan(40);
    expect(report.results.filter((r) => r.outcome === 'fail')).toEqual([]);
    const observations = report.results.filter((r) => r.outcome === 'observation');
    expect(observations.length).toBeGreaterThan(3);
    for (const o of observations) expect(o.observation, o.id).toMatchObject({ asEmulator: true });
    expect(report.cleanupFailures).toEqual([]);
    expect(await tableNames()).toEqual([...FOREIGN].sort());
  });

  it('prints a line per check and the summary line, exit 0', async () => {
    const run = await conformance(emu.url, '--only', 'tables.', '--only', 'statuses.');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe(`wsmirror conformance: ${emu.url}, workspace ${emu.workspaceId}, module ${MODULE}`);
    expect(lines).toContain('pass  tables.patch.rename');
    expect(lines).toContain('note  statuses.success  (not shown in the API description; observed, not judged)');
    expect(lines.at(-1)).toBe('8 passed, 0 failed');
  });

  it('--dry-run sends nothing and lists the scratch tables it would create', async () => {
    // An address nothing listens on: a request would fail the run.
    const run = await runWsmirror(['conformance', '--module', MODULE, '--dry-run', '--only', 'records.update'], envFor('http://127.0.0.1:9'));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^wsmirror conformance --dry-run: run [a-z0-9]{10} would first delete scratch tables of earlier runs that have ended \(scratch\.wsmconf_<10 characters a-z0-9>_\*\), then:$/m);
    expect(run.stdout).toMatch(/^ {2}check records\.update: creates and deletes scratch\.wsmconf_[a-z0-9]{10}_update$/m);
  });

  it('refuses an unknown module or a half-configured upstream (exit 78), wants --module against an upstream and --only to match (exit 2)', async () => {
    const unknown = await runWsmirror(['conformance', '--module', 'nope'], envFor(emu.url));
    expect(unknown.code).toBe(78);
    expect(unknown.stderr).toContain('--module nope: the workspace has no module of that name');
    const missing = await runWsmirror(['conformance'], envFor(emu.url));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--module NAME is required');
    const half = await runWsmirror(['conformance', '--module', MODULE], { WSMIRROR_BASE_URL: emu.url });
    expect(half.code).toBe(78);
    expect(half.stderr).toContain('WSMIRROR_WORKSPACE_ID');
    const none = await runWsmirror(['conformance', '--module', MODULE, '--only', 'nothing.'], envFor(emu.url));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--only nothing.: no check id starts with that');
  });
});

describe('wsmirror conformance, alone and gentle', { timeout: 120_000 }, () => {
  it('with no upstream configured, runs against an embedded emulator', async () => {
    const run = await runWsmirror(['conformance', '--only', 'tables.'], { WSMIRROR_LOG_LEVEL: 'warn' }, { killAfterMs: 120_000 });
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toMatch(/^wsmirror conformance: an embedded emulator \(http:\/\/127\.0\.0\.1:[0-9]+\); set WSMIRROR_BASE_URL/);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('8 passed, 0 failed');
  });

  it('keeps to --rate: the requests reach the endpoint 1/rate seconds apart', async () => {
    const proxy = await startRewritingProxy(emu.url);
    try {
      const run = await conformance(proxy.url, '--rate', '5', '--only', 'tables.get.unknown-404', '--only', 'tables.unknown-module-404', '--json');
      expect(run.code).toBe(0);
      const at = proxy.seen.map((r) => r.at);
      expect(at.length).toBe((JSON.parse(run.stdout) as ConformanceReport).requests);
      expect(at.length).toBeGreaterThan(5);
      // From the second request on: the first one's arrival also waits for the connection to be
      // made and the endpoint to warm up, so its gap says little either way.
      const gaps = at.slice(2).map((t, i) => t - at[i + 1]!);
      // Sent 200 ms apart. The proxy sees each when its event loop gets to it, which on a busy
      // machine can be late for one request and not for the next (324 ms then 61 ms was seen): a
      // late arrival lengthens the gap before it by what it shortens the gap after it, so two
      // gaps in a row always add up to about 400 ms (requests sent unpaced arrive 5 to 40 ms apart).
      for (let i = 1; i < gaps.length; i++) expect(gaps[i - 1]! + gaps[i]!, JSON.stringify(gaps)).toBeGreaterThanOrEqual(320);
      expect([...gaps].sort((x, y) => x - y)[Math.floor(gaps.length / 2)], JSON.stringify(gaps)).toBeGreaterThanOrEqual(190);
      expect(at.at(-1)! - at[1]!).toBeGreaterThanOrEqual((at.length - 2) * 200 - 80);
    } finally {
      await proxy.close();
    }
  });

  it('waits out a 429 for its Retry-After (1 s) before repeating the request: a rate limit is no failure', async () => {
    const admin = (method: string, body?: unknown) => fetch(`${emu.url}/_emulator/faults`, {
      method,
      headers: { authorization: `Bearer ${emu.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const proxy = await startRewritingProxy(emu.url);
    expect((await admin('PUT', { rateLimitRate: 0.3, retryAfterSeconds: 1, seed: 7 })).status).toBe(200);
    try {
      const run = await conformance(proxy.url, '--only', 'tables.get.unknown-404', '--only', 'tables.unknown-module-404', '--json');
      const report = JSON.parse(run.stdout) as ConformanceReport;
      expect(report.failed).toBe(0);
      expect(report.rateLimited).toBeGreaterThan(0);
      expect(run.code).toBe(0);
      const limited = proxy.seen.flatMap((r, i) => (r.status === 429 ? [i] : []));
      expect(limited.length).toBe(report.rateLimited);
      for (const i of limited) {
        // The next request is the same one again, sent no sooner than Retry-After says.
        const [first, again] = [proxy.seen[i]!, proxy.seen[i + 1]!];
        expect([again.method, again.path, again.body]).toEqual([first.method, first.path, first.body]);
        expect(again.at - first.at).toBeGreaterThanOrEqual(1000);
      }
    } finally {
      expect((await admin('DELETE')).status).toBe(200);
      await proxy.close();
    }
    expect(await tableNames()).toEqual([...FOREIGN].sort());
  });

  it('two runs at once against one module both pass, and leave the module as it was', async () => {
    const [a, b] = await Promise.all([conformance(emu.url, '--only', 'records.', '--json'), conformance(emu.url, '--only', 'records.', '--json')]);
    for (const run of [a, b]) {
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as ConformanceReport).failed).toBe(0);
    }
    expect(await tableNames()).toEqual([...FOREIGN].sort());
  });
});

describe('wsmirror conformance against an endpoint that breaks one rule', { timeout: 120_000 }, () => {
  let proxy: RewritingProxy;
  beforeAll(async () => {
    proxy = await startRewritingProxy(emu.url);
  });
  afterAll(() => proxy.close());

  async function failuresWith(
    rewrite: Rewrite, only: string[], options: { text?: boolean } = {},
  ): Promise<{ report: ConformanceReport; code: number | null; text: string }> {
    proxy.rewrite = rewrite;
    try {
      const json = await conformance(proxy.url, '--json', ...only.flatMap((o) => ['--only', o]));
      const text = options.text ? (await conformance(proxy.url, ...only.flatMap((o) => ['--only', o]))).stdout : '';
      return { report: JSON.parse(json.stdout) as ConformanceReport, code: json.code, text };
    } finally {
      proxy.rewrite = undefined;
    }
  }

  const failed = (report: ConformanceReport) => report.results.filter((r) => r.outcome === 'fail').map((r) => r.id);

  it('a wrong status: a field create answered 200 fails fields.create-201, showing the request and the difference', async () => {
    const { report, code, text } = await failuresWith(
      (path, _body, { method, status }) => (method === 'POST' && /\/fields$/.test(path) && status === 201 ? { status: 200 } : undefined),
      ['fields.create-201', 'tables.'],
      { text: true },
    );
    expect(code).toBe(1);
    expect(failed(report)).toEqual(['fields.create-201']);
    expect(text).toMatch(/^FAIL {2}fields\.create-201$/m);
    expect(text).toMatch(/^ {6}request: POST \/api\/v1\/workspace\/proc00000001\/modules\/scratch\/tables\/wsmconf_[a-z0-9]{10}_field_create\/fields \{"name":"title"/m);
    expect(text).toContain('      expected: HTTP 201');
    expect(text).toMatch(/^ {6}actual: {3}HTTP 200: \{"data":\{"id"/m);
    expect(text.trim().split('\n').at(-1)).toBe('8 passed, 1 failed');
    expect(await tableNames()).toEqual([...FOREIGN].sort());
  });

  it('a missing meta.asOf on record changes fails the record-changes checks, naming the place', async () => {
    const { report, code } = await failuresWith((path, body) => {
      if (!path.includes('/records/changes')) return undefined;
      const page = JSON.parse(body);
      if (page.meta) delete page.meta.asOf;
      return JSON.stringify(page);
    }, ['record-changes.', 'records.create']);
    expect(code).toBe(1);
    // Every check that polls record changes fails, the observation among them (a broken answer is
    // no observation); records.create, which does not, passes.
    expect(failed(report)).toEqual([
      'records.create.transactional', 'record-changes.query-400-404', 'record-changes.lists-changes', 'record-changes.failed-requests-log-nothing',
      'record-changes.since-inclusive', 'record-changes.paging-as-of', 'record-changes.entries', 'record-changes.change-types',
    ]);
    const failure = report.results.find((r) => r.id === 'record-changes.lists-changes')!.failure!;
    expect(failure.actual).toContain('response.meta.asOf');
    expect(failure.request?.target).toMatch(/\/records\/changes\?since=1970-01-01T00%3A00%3A00Z&limit=1$/);
    expect(report.results.find((r) => r.id === 'record-changes.history-required-400')!.outcome).toBe('pass');
    expect(report.results.find((r) => r.id === 'records.create')!.outcome).toBe('pass');
  });

  it('a paging flag: has_more false on a first page that is not the last fails record-changes.paging-as-of', async () => {
    const { report } = await failuresWith((path, body) => {
      if (!/\/records\/changes\?.*limit=2/.test(path) || path.includes('offset=')) return undefined;
      const page = JSON.parse(body);
      page.page_info.has_more = false;
      return JSON.stringify(page);
    }, ['record-changes.paging-as-of', 'records.list.paging']);
    expect(failed(report)).toEqual(['record-changes.paging-as-of']);
    const failure = report.results.find((r) => r.id === 'record-changes.paging-as-of')!.failure!;
    expect(failure.message).toBe('page_info of the first page');
    expect(failure.expected).toBe('{"has_more":true,"limit":2,"offset":0}');
    expect(failure.actual).toBe('{"has_more":false,"limit":2,"offset":0}');
  });

  it('never prints the API key, even when the endpoint echoes it back', async () => {
    const { report, text } = await failuresWith(
      (_path, _body, { status }) => (status === 404 ? { body: JSON.stringify({ message: `key ${emu.apiKey} is fine, table is not` }) } : undefined),
      ['tables.get.unknown-404'],
      { text: true },
    );
    expect(failed(report)).toEqual(['tables.get.unknown-404']);
    expect(report.results[0]!.failure!.actual).toContain('key [Redacted] is fine');
    expect(JSON.stringify(report)).not.toContain(emu.apiKey);
    expect(text).not.toContain(emu.apiKey);
  });

  it('an error without the error body fails the rule that wanted it', async () => {
    const { report } = await failuresWith(
      (_path, body, { status }) => (status === 404 ? { body: JSON.stringify({ message: JSON.parse(body).error.message }) } : undefined),
      ['tables.get.unknown-404'],
    );
    expect(failed(report)).toEqual(['tables.get.unknown-404']);
    expect(report.results[0]!.failure!.message).toContain('the error body is { error: { message } }');
  });
});

describe('wsmirror conformance interrupted', { timeout: 120_000 }, () => {
  let proxy: HoldingProxy;
  beforeAll(async () => {
    proxy = await startHoldingProxy(emu.url);
  });
  afterAll(() => proxy.close());

  /**
   * Starts a run through a proxy that holds back the answer to its first records create (the
   * records and their scratch table exist upstream by then), and sends `signal` at that moment.
   */
  async function interrupted(signal: NodeJS.Signals) {
    let child: ChildProcess | undefined;
    let seen: string[] = [];
    const held = proxy.holdNext((method, path) => method === 'POST' && /\/records$/.test(path)).then(async () => {
      seen = (await tableNames()).filter((n) => !FOREIGN.includes(n));
      child?.kill(signal);
    });
    const run = await runWsmirror(['conformance', '--module', MODULE, '--rate', '0'], envFor(proxy.url), {
      killAfterMs: 120_000,
      onSpawn: (_kill, c) => {
        child = c;
      },
    });
    await held;
    return { run, seen };
  }

  it('kill -9 mid-run leaves scratch tables; a later run keeps them until the killed run\'s time limit has passed, then removes them first, and only them', async () => {
    const { run, seen } = await interrupted('SIGKILL');
    expect(run.signal).toBe('SIGKILL');
    expect(seen.length).toBeGreaterThan(0);
    const left = (await tableNames()).filter((n) => !FOREIGN.includes(n));
    expect(left.length).toBeGreaterThan(0);

    // The killed run could still be going on for all the next run knows: its tables stay.
    const soon = await conformance(emu.url, '--only', 'auth.');
    expect(soon.code).toBe(0);
    expect(soon.stdout).toContain(`left ${left.length} scratch table(s) of other runs alone: they may still be running (their time limit has not passed)`);
    expect((await tableNames()).filter((n) => !FOREIGN.includes(n))).toEqual(left);

    // By the endpoint's clock the killed run's hour is over.
    const clock = (method: string, body?: unknown) => fetch(`${emu.url}/_emulator/clock`, {
      method,
      headers: { authorization: `Bearer ${emu.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect((await clock('PUT', { advanceMs: 2 * 60 * 60_000 })).status).toBe(200);
    try {
      const next = await conformance(emu.url, '--only', 'auth.');
      expect(next.code).toBe(0);
      expect(next.stdout).toContain(`removed ${left.length} scratch table(s) left by earlier runs that have ended`);
      expect(await tableNames()).toEqual([...FOREIGN].sort());
    } finally {
      expect((await clock('DELETE')).status).toBe(200);
    }
  });

  it('SIGINT mid-run stops between requests, deletes this run\'s tables and exits 1', async () => {
    const { run, seen } = await interrupted('SIGINT');
    expect(seen.length).toBeGreaterThan(0);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^interrupted: [0-9]+ check\(s\) ran; the scratch tables of this run were deleted$/m);
    expect(run.stdout.trim().split('\n').at(-1)).toMatch(/^[0-9]+ passed, 0 failed$/);
    expect(await tableNames()).toEqual([...FOREIGN].sort());
  });
});
