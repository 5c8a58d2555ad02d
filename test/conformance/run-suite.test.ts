import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConformance, type ConformanceOptions } from '../../src/conformance/index.ts';
import { defineCheck } from '../../src/conformance/check.ts';
import { expectOk } from '../../src/conformance/expectations.ts';
import { newRunId, scratchName } from '../../src/conformance/scratch.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.ts';
import { makeModule, tablesPath } from '../helpers/schema.ts';

/**
 * How a run handles its scratch tables: declared tables only, the module listed once at the start
 * and once at the end, and runs that overlap leaving each other's tables alone. Through a proxy
 * that records every request, in front of an emulator in this process.
 */
const MODULE = 'suite';
let emu: RunningEmulator;
let proxy: RewritingProxy;

beforeAll(async () => {
  emu = await startEmulator();
  await makeModule(emu, MODULE);
  proxy = await startRewritingProxy(emu.url);
});
afterAll(async () => {
  await proxy.close();
  await emu.close();
});

function run(options: Partial<ConformanceOptions>) {
  return runConformance({ target: { baseUrl: proxy.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId }, module: MODULE, rate: 0, checks: [], ...options });
}

async function tableNames(): Promise<string[]> {
  const res = await fetch(`${emu.url}${emu.base}/${tablesPath(MODULE)}`, { headers: { authorization: `Bearer ${emu.apiKey}` } });
  return ((await res.json()) as { data: { name: string }[] }).data.map((t) => t.name).sort();
}

async function createTable(name: string): Promise<void> {
  const res = await fetch(`${emu.url}${emu.base}/${tablesPath(MODULE)}`, {
    method: 'POST', headers: { authorization: `Bearer ${emu.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
}

const listsOfTables = () => proxy.seen.filter((r) => r.method === 'GET' && r.path.endsWith(`/modules/${MODULE}/tables`)).length;

describe('scratch table declarations', () => {
  it('a check that creates a table it did not declare, or declares one it never creates, fails naming it; nothing undeclared is sent', async () => {
    proxy.seen = [];
    const report = await run({
      checks: [
        defineCheck({ id: 'test.create-undeclared', section: 't', rule: 't', scratchTables: ['a'], run: async (ctx) => {
          await ctx.scratch.create('a');
          await ctx.scratch.create('b');
        } }),
        defineCheck({ id: 'test.send-undeclared', section: 't', rule: 't', scratchTables: ['a'], run: async (ctx) => {
          await ctx.scratch.create('a');
          await ctx.send('createTable', { body: { name: `${ctx.scratch.prefix}raw` } });
        } }),
        defineCheck({ id: 'test.rename-undeclared', section: 't', rule: 't', scratchTables: ['a'], run: async (ctx) => {
          const { name } = await ctx.scratch.create('a');
          await ctx.send('updateTable', { params: { tableName: name }, body: { name: 'someone_elses' } });
        } }),
        defineCheck({ id: 'test.declared-unmade', section: 't', rule: 't', scratchTables: ['a', 'never'], run: async (ctx) => {
          await ctx.scratch.create('a');
        } }),
        defineCheck({ id: 'test.as-declared', section: 't', rule: 't', scratchTables: ['a', 'renamed'], run: async (ctx) => {
          const { name } = await ctx.scratch.create('a');
          expectOk(await ctx.send('updateTable', { params: { tableName: name }, body: { name: ctx.scratch.name('renamed') } }));
          ctx.scratch.renamed(name, ctx.scratch.name('renamed'));
        } }),
      ],
    });
    const outcome = Object.fromEntries(report.results.map((r) => [r.id, r.failure?.message ?? r.outcome]));
    expect(outcome).toEqual({
      'test.create-undeclared': 'the check uses the scratch table "b", which its scratchTables (["a"]) does not declare',
      'test.send-undeclared': expect.stringMatching(/^the check would create suite\.wsmconf_[a-z0-9]{10}_raw, which is not one of its declared scratch tables \(\["a"\]\); nothing was sent$/),
      'test.rename-undeclared': 'the check would rename a table to suite.someone_elses, which is not one of its declared scratch tables (["a"]); nothing was sent',
      'test.declared-unmade': 'the check declares scratch tables it never created: never (its scratchTables must list exactly what it creates)',
      'test.as-declared': 'pass',
    });
    const creates = proxy.seen.filter((r) => r.method === 'POST' && r.path.endsWith('/tables')).map((r) => (JSON.parse(r.body) as { name: string }).name);
    expect(creates.every((name) => /^wsmconf_[a-z0-9]{10}_a$/.test(name))).toBe(true);
    expect(creates).toHaveLength(5);
    expect(proxy.seen.some((r) => r.method === 'PATCH' && r.body.includes('someone_elses'))).toBe(false);
    expect(await tableNames()).toEqual([]);
  });
});

describe('listing the module', () => {
  it('a run lists the module\'s tables twice: at the start (the leftover sweep works from that list) and at its end', async () => {
    proxy.seen = [];
    const report = await run({ checks: [] });
    expect(listsOfTables()).toBe(2);
    // The endpoint's time, the list at the start, the list of the last sweep.
    expect(report.requests).toBe(3);
  });
});

describe('runs that overlap', () => {
  it('two runs at once both pass: the second keeps the first one\'s tables, which are in use', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const first = run({
      checks: [defineCheck({ id: 'test.holds', section: 't', rule: 't', scratchTables: ['held'], run: async (ctx) => {
        const { name } = await ctx.scratch.create('held');
        holding();
        await released;
        expectOk(await ctx.send('getTable', { params: { tableName: name } }), 'the table is still there after the other run');
      } })],
    });
    await held;
    const second = await run({
      checks: [defineCheck({ id: 'test.own', section: 't', rule: 't', scratchTables: ['own'], run: async (ctx) => {
        await ctx.scratch.create('own');
      } })],
    });
    release();
    const firstReport = await first;
    expect(second.results.map((r) => r.outcome)).toEqual(['pass']);
    expect(second.otherRunsKept).toEqual([scratchName(firstReport.runId, 'held')]);
    expect(second.leftoversRemoved).toEqual([]);
    expect(firstReport.results.map((r) => r.failure?.message ?? r.outcome)).toEqual(['pass']);
    expect(await tableNames()).toEqual([]);
  });

  it('removes the tables of runs whose time limit has passed by the endpoint\'s clock, and keeps the others', async () => {
    const now = Date.now();
    const ended = scratchName(newRunId(now - 3 * 60_000), 'left');
    const going = scratchName(newRunId(now + 10 * 60_000), 'going');
    const justEnded = scratchName(newRunId(now - 1), 'just');
    for (const name of [ended, going, justEnded, 'wsmconf_looks_like_one', 'other']) await createTable(name);
    const report = await run({ checks: [] });
    expect(report.leftoversRemoved).toEqual([ended]);
    // A run just past its end may still have a request on its way: spared for a minute more.
    expect(report.otherRunsKept.sort()).toEqual([going, justEnded].sort());
    expect(await tableNames()).toEqual([going, justEnded, 'other', 'wsmconf_looks_like_one'].sort());
    for (const name of [going, justEnded, 'other', 'wsmconf_looks_like_one']) {
      await fetch(`${emu.url}${emu.base}/${tablesPath(MODULE)}/${name}`, { method: 'DELETE', headers: { authorization: `Bearer ${emu.apiKey}` } });
    }
  });

  it('a run stops itself at its time limit, as if interrupted, and deletes its tables', async () => {
    const report = await run({
      timeLimitMs: 300,
      checks: [
        defineCheck({ id: 'test.slow', section: 't', rule: 't', scratchTables: ['slow'], run: async (ctx) => {
          await ctx.scratch.create('slow');
          for (;;) expectOk(await ctx.send('listTables'));
        } }),
        defineCheck({ id: 'test.never', section: 't', rule: 't', run: async () => {} }),
      ],
    });
    expect(report.interrupted).toBe(true);
    expect(report.timeLimitReached).toBe(true);
    expect(report.results).toEqual([]);
    expect(report.cleanupFailures).toEqual([]);
    expect(await tableNames()).toEqual([]);
  });
});
