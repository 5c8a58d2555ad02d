import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field } from '../helpers/schema.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror import TABLE FILE` as a real process against a real emulator: a spreadsheet goes
 * upstream through the import endpoint, and the next `wsmirror sync` brings it into the mirror.
 */

let emu: RunningEmulator;
let upstream: UpstreamWorkspace;
const dir = mkdtempSync(join(tmpdir(), 'wsmirror-import-cli-'));

beforeAll(async () => {
  emu = await startEmulator();
  upstream = new UpstreamWorkspace(emu);
  await upstream.createModule('sales');
  await upstream.createTable('sales', 'leads', { hasHistory: true }, [
    field('company', 'string', { required: true }),
    field('email', 'string', { unique: true }),
    field('revenue', 'number'),
    field('active', 'boolean'),
  ]);
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const env = (db = 'unused.db', extra: Record<string, string> = {}) => daemonEnv(emu, { url: `sqlite:${join(dir, db)}` }, extra);

forEachDialect('import, then sync', ({ dialect, fresh }) => {
  it('the imported rows arrive in the mirror with the next sync', async () => {
    const m = await fresh();
    const company = `${dialect} GmbH`;
    // A European spreadsheet export: semicolons, decimal commas, a byte-order mark, CRLF.
    const csv = file(`${dialect}.csv`, `\ufeffCompany;Email;Revenue;Active\r\n"${company}; Berlin";info@${dialect}.example;1.234,50;yes\r\n`);
    const run = await runWsmirror(['import', 'sales.leads', csv, '--number-format', 'eu', '--json'], env());
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ rowsImported: 1, rowsUpdated: 0, rowsSkipped: 0 });

    const sync = await runWsmirror(['sync'], daemonEnv(emu, { url: m.url, pgSchema: m.pgSchema }));
    expect(sync.code, sync.stderr).toBe(0);
    const rows = await m.sql<{ company: string; revenue: number; active: unknown }>(
      `SELECT company, revenue, active FROM ${m.table('sales__leads')} WHERE email = ${dialect === 'sqlite' ? '?' : '$1'}`,
      [`info@${dialect}.example`],
    );
    expect(rows.map((r) => [r.company, Number(r.revenue), Number(r.active)])).toEqual([
      [`${company}; Berlin`, 1234.5, 1],
    ]);
  });
});

it('upserts with the same options as the API, and prints a summary', async () => {
  const first = file('first.csv', 'company,email,revenue\nAcme,a@acme.example,10\nBeta,b@beta.example,20\n');
  expect((await runWsmirror(['import', 'sales.leads', first], env())).code).toBe(0);
  const update = file('update.csv', 'email|revenue\na@acme.example|11\nc@gamma.example|30\n');
  const mappings = JSON.stringify([{ csvColumnName: 'email', fieldName: 'email', updatePolicy: 'key' }, { csvColumnName: 'revenue', fieldName: 'revenue' }]);
  const run = await runWsmirror(['import', 'sales.leads', update, '--mode', 'update', '--mappings', mappings, '--batch-size', '1'], env());
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toBe('sales.leads: 0 created, 1 updated, 1 skipped\n');
  const acme = (await upstream.allRecords('sales', 'leads')).find((r) => r.values.email === 'a@acme.example');
  expect(acme?.values.revenue).toBe(11);
});

it('exits 1 with the upstream message naming line and column, and imports nothing', async () => {
  const before = (await upstream.allRecords('sales', 'leads')).length;
  const bad = file('bad.csv', 'company,revenue\nOne,1\nTwo,lots\n');
  const run = await runWsmirror(['import', 'sales.leads', bad], env());
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('HTTP 400: line 3, column 2 ("revenue"): expected a number in the us format');
  expect(run.stdout + run.stderr).not.toContain(emu.apiKey);
  expect((await upstream.allRecords('sales', 'leads')).length).toBe(before);
});

it('exits 2 on usage errors, naming the flag or argument, before anything is sent', async () => {
  const csv = file('usage.csv', 'company\nx\n');
  const table = await runWsmirror(['import', 'leads', csv], env());
  expect(table.code).toBe(2);
  expect(table.stderr).toContain('TABLE must be module.table');
  const mode = await runWsmirror(['import', 'sales.leads', csv, '--mode', 'merge'], env());
  expect(mode.code).toBe(2);
  expect(mode.stderr).toContain('--mode: must be one of append, update, upsert');
  const key = await runWsmirror(['import', 'sales.leads', csv, '--mode', 'upsert'], env());
  expect(key.code).toBe(2);
  expect(key.stderr).toContain('--mappings: importMode upsert needs mappings');
  const missing = await runWsmirror(['import', 'sales.leads', join(dir, 'nope.csv')], env());
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('cannot read');
});

it('refuses a file over 50 MiB before uploading it', async () => {
  const big = file('big.csv', '');
  truncateSync(big, 50 * 1024 * 1024 + 1); // sparse: nothing is written
  const run = await runWsmirror(['import', 'sales.leads', big], env());
  expect(run.code).toBe(2);
  expect(run.stderr).toContain('is 52428801 bytes; a CSV import takes at most 52428800 bytes');
});
