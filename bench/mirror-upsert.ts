// Rows/s of Mirror.applyRows on each dialect: 100k rows of 10 mixed-type fields, inserted then
// updated (every row conflicting), in 10,000-row batches (backfill) and 100-row batches (one API
// page each). On Postgres it also compares the mirror's COPY path with a multi-row INSERT … ON
// CONFLICT in 1,000-row statements, on 50k rows in one transaction, as a ratio from the same run.
//
//   npm run bench -- mirror-upsert [--rows=100000] [--strategy-rows=50000] [--pg-url=postgres://…]
//   (Postgres by default from WSMIRROR_BENCH_PG_URL or WSMIRROR_TEST_PG_URL, else
//   postgres://postgres@127.0.0.1:5432/postgres)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Field } from '../src/api/field.ts';
import type { Workspace } from '../src/api/workspace.ts';
import { openMirror } from '../src/mirror/open-mirror.ts';
import type { Mirror } from '../src/mirror/mirror.ts';
import { planSchema } from '../src/mirror/schema-planner.ts';
import { apiToSql } from '../src/mirror/value-codec.ts';
import type { BenchOptions } from './run.ts';

const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

interface Settings {
  rows: number;
  strategyRows: number;
  pgUrl: string;
}

const FIELDS: Field[] = [
  { id: 'f1', name: 'title', type: 'string' },
  { id: 'f2', name: 'amount', type: 'number' },
  { id: 'f3', name: 'won', type: 'boolean' },
  { id: 'f4', name: 'close_date', type: 'date' },
  { id: 'f5', name: 'updated', type: 'timestamp' },
  { id: 'f6', name: 'status', type: 'choice' },
  { id: 'f7', name: 'tags', type: 'multi' },
  { id: 'f8', name: 'account', type: 'reference' },
  { id: 'f9', name: 'notes', type: 'html' },
  { id: 'f10', name: 'extra', type: 'any' },
];

function workspaceWith(tableIds: string[]): Workspace {
  return {
    name: 'bench',
    modules: [{ id: 'm', name: 'bench', tables: tableIds.map((id) => ({ id, name: id, hasHistory: true, fields: FIELDS })) }],
  };
}

function record(id: number, round: number) {
  return {
    id: String(id),
    values: {
      title: `Deal ${id} round ${round}`,
      amount: id * 1.25 + round,
      won: (id + round) % 2 === 0,
      close_date: '2026-03-14',
      updated: new Date(1_767_225_600_000 + id * 1000 + round).toISOString(),
      status: `opt_${(id + round) % 5}`,
      tags: ['hot', `t${id % 7}`],
      account: (id % 1000) + 1,
      notes: `<p>Note for ${id}\nwith a tab\tand "quotes"</p>`,
      extra: { round, nested: { id, ok: true } },
    },
  };
}

async function timeBatches(mirror: Mirror, tableId: string, rows: number, batch: number, round: number): Promise<number> {
  const started = performance.now();
  for (let from = 1; from <= rows; from += batch) {
    const upserts = [];
    for (let id = from; id < from + batch && id <= rows; id++) upserts.push(record(id, round));
    await mirror.applyRows(tableId, { upserts, cursors: { [`table:${tableId}:records`]: String(from) } });
  }
  return Math.round(rows / ((performance.now() - started) / 1000));
}

async function runDialect(mirror: Mirror, rows: number) {
  const batches = [10_000, 100];
  const tables = batches.map((b) => `upsert_${b}`);
  const catalog = await mirror.readCatalog();
  await mirror.applySchemaPlan(planSchema(catalog, workspaceWith([...tables, 'copy_50k'])));
  const results = [];
  for (const [i, batch] of batches.entries()) {
    const insertRowsPerSec = await timeBatches(mirror, tables[i]!, rows, batch, 1);
    const updateRowsPerSec = await timeBatches(mirror, tables[i]!, rows, batch, 2);
    if ((await mirror.countRows(tables[i]!)) !== rows) throw new Error('row count mismatch');
    results.push({ batch, insertRowsPerSec, updateRowsPerSec });
  }
  return results;
}

/** COPY (the mirror) against multi-row INSERT … ON CONFLICT, same rows, same run. */
async function comparePostgresStrategies(mirror: Mirror, schema: string, settings: Settings) {
  const rows = Array.from({ length: settings.strategyRows }, (_, i) => record(i + 1, 1));
  const copy = async () => {
    const t = performance.now();
    await mirror.applyRows('copy_50k', { upserts: rows });
    return performance.now() - t;
  };

  const client = new pg.Client({ connectionString: settings.pgUrl });
  await client.connect();
  const q = (s: string) => pg.escapeIdentifier(s);
  const cols = ['id', '_synced_at', ...FIELDS.map((f) => f.name)];
  await client.query(`CREATE TABLE ${q(schema)}.insert_50k (LIKE ${q(schema)}.${q('bench__copy_50k')} INCLUDING ALL)`);
  const setList = cols.slice(1).map((c) => `${q(c)} = excluded.${q(c)}`).join(', ');
  const insert = async () => {
    const t = performance.now();
    const syncedAt = new Date().toISOString();
    const encoded = rows.map((r) => [Number(r.id), syncedAt, ...FIELDS.map((f) => apiToSql(f.type, (r.values as Record<string, unknown>)[f.name], 'postgres'))]);
    await client.query('BEGIN');
    for (let i = 0; i < encoded.length; i += 1000) {
      const chunk = encoded.slice(i, i + 1000);
      let n = 0;
      const tuples = chunk.map((row) => `(${row.map(() => `$${++n}`).join(', ')})`).join(', ');
      await client.query(
        `INSERT INTO ${q(schema)}.insert_50k (${cols.map(q).join(', ')}) VALUES ${tuples} ON CONFLICT (id) DO UPDATE SET ${setList}`,
        chunk.flat(),
      );
    }
    await client.query('COMMIT');
    return performance.now() - t;
  };
  // Fresh insert, then a full conflict pass, for each; alternated to share the machine's noise.
  const copyMs = [await copy()];
  const insertMs = [await insert()];
  copyMs.push(await copy());
  insertMs.push(await insert());
  await client.end();
  const perSec = (ms: number) => Math.round(settings.strategyRows / (ms / 1000));
  return {
    rows: settings.strategyRows,
    copyRowsPerSec: { insert: perSec(copyMs[0]!), update: perSec(copyMs[1]!) },
    multiRowInsertRowsPerSec: { insert: perSec(insertMs[0]!), update: perSec(insertMs[1]!) },
    copyOverInsertRatio: {
      insert: Number((insertMs[0]! / copyMs[0]!).toFixed(2)),
      update: Number((insertMs[1]! / copyMs[1]!).toFixed(2)),
    },
  };
}

export async function run(options: BenchOptions = {}) {
  const pgUrl = options['pg-url'];
  const settings: Settings = {
    rows: Number(options.rows ?? 100_000),
    strategyRows: Number(options['strategy-rows'] ?? 50_000),
    pgUrl: typeof pgUrl === 'string' ? pgUrl : (process.env['WSMIRROR_BENCH_PG_URL'] ?? process.env['WSMIRROR_TEST_PG_URL'] ?? DEFAULT_PG_URL),
  };
  const out: Record<string, unknown> = { rows: settings.rows, fields: FIELDS.length };

  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  try {
    const mirror = await openMirror(`sqlite:${join(dir, 'bench.db')}`);
    out['sqlite'] = await runDialect(mirror, settings.rows);
    await mirror.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const schema = `wsm_bench_${randomBytes(4).toString('hex')}`;
  let mirror: Mirror | undefined;
  try {
    mirror = await openMirror(settings.pgUrl, { pgSchema: schema });
    out['postgres'] = await runDialect(mirror, settings.rows);
    out['postgresStrategies'] = await comparePostgresStrategies(mirror, schema, settings);
  } catch (error) {
    out['postgres'] = { skipped: (error as Error).message };
  } finally {
    await mirror?.close();
    if (mirror) {
      const admin = new pg.Client({ connectionString: settings.pgUrl });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    }
  }
  return out;
}
