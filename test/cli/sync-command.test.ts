import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** DESIGN §2: `wsmirror sync` exits 0 when the mirror is current, 1 when not, 2 and 78 for usage and configuration. */
let emu: RunningEmulator;
let upstream: UpstreamWorkspace;
const dir = mkdtempSync(join(tmpdir(), 'wsmirror-sync-cli-'));

beforeAll(async () => {
  emu = await startEmulator();
  upstream = new UpstreamWorkspace(emu);
  await upstream.createModule('shop');
  await upstream.createTable('shop', 'items', { hasHistory: false }, [{ name: 'qty', type: 'number', labels: { '': 'Qty' } }]);
  await upstream.createRecords('shop', 'items', Array.from({ length: 300 }, (_, i) => ({ qty: i })));
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

function env(file: string, extra: Record<string, string> = {}): Record<string, string> {
  return daemonEnv(emu, { url: `sqlite:${join(dir, file)}` }, extra);
}

it('exits 0 with the cycle report when the mirror is current', async () => {
  const run = await runWsmirror(['sync', '--json'], env('ok.db'));
  expect(run.code, run.stderr).toBe(0);
  const report = JSON.parse(run.stdout);
  expect(report.ok).toBe(true);
  expect(report.tables).toEqual([expect.objectContaining({ table: 'shop.items', action: 'scan', upserted: 300 })]);
});

it('exits 1 and names the table and the reason when a table cannot be brought up to date', async () => {
  expect((await runWsmirror(['sync'], env('valve.db'))).code).toBe(0);
  const all = await upstream.allRecords('shop', 'items');
  await upstream.deleteRecords('shop', 'items', all.slice(0, 250).map((r) => r.id));
  const run = await runWsmirror(['sync'], env('valve.db'));
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/shop\.items: .*would delete more than/);
});

it('exits 78 naming the variable at fault, and never prints the API key', async () => {
  const run = await runWsmirror(['sync'], env('bad.db', { WSMIRROR_SCHEDULE: 'every now and then', WSMIRROR_API_KEY: 'super-secret-key-123' }));
  expect(run.code).toBe(78);
  expect(run.stderr).toContain('WSMIRROR_SCHEDULE');
  expect(run.stdout + run.stderr).not.toContain('super-secret-key-123');
});

it('exits 1 without leaking the key when upstream refuses it', async () => {
  const run = await runWsmirror(['sync'], env('refused.db', { WSMIRROR_API_KEY: 'wrong-key-456789' }));
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('401');
  expect(run.stdout + run.stderr).not.toContain('wrong-key-456789');
});

it('exits 2 on a usage error', async () => {
  const run = await runWsmirror(['sync', '--no-such-flag'], env('usage.db'));
  expect(run.code).toBe(2);
});

it('follows the table patterns: a change of patterns alone adds and drops tables', async () => {
  await upstream.createTable('shop', 'orders', { hasHistory: true }, [{ name: 'total', type: 'number', labels: { '': 'Total' } }]);
  await upstream.createRecords('shop', 'orders', [{ total: 5 }, { total: 7 }]);
  const { default: Database } = await import('better-sqlite3');
  const tablesIn = (file: string) => {
    const db = new Database(join(dir, file), { readonly: true });
    try {
      return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'shop%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    } finally {
      db.close();
    }
  };
  const only = await runWsmirror(['sync'], env('patterns.db', { WSMIRROR_TABLES_INCLUDE: 'shop.orders', WSMIRROR_SYNC_LOOKBACK: '0s' }));
  expect(only.code, only.stderr).toBe(0);
  expect(tablesIn('patterns.db')).toEqual(['shop__orders']);

  // Upstream did not change; only the patterns did. (No lookback, so nothing upstream would
  // trigger a re-read of the workspace.)
  const all = await runWsmirror(['sync'], env('patterns.db', { WSMIRROR_TABLES_EXCLUDE: 'shop.ord*', WSMIRROR_SYNC_LOOKBACK: '0s' }));
  expect(all.code, all.stderr).toBe(0);
  expect(tablesIn('patterns.db')).toEqual(['shop__items']);
});

it('--help names the steps of a cycle in the order the engine runs them, as the README does', async () => {
  const help = await runWsmirror(['sync', '--help'], {});
  expect(help.code, help.stderr).toBe(0);
  // The engine (src/sync/engine.ts) pulls the schema, pushes local edits, then pulls records.
  const steps = /\(([^)]*records)\)/.exec(help.stdout.replace(/\s+/g, ' '))?.[1];
  expect(steps).toBe('schema, push local edits, then records');
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  expect(readme).toContain(`| \`wsmirror sync\` | one full cycle (${steps})`);
});
