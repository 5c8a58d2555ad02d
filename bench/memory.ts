// `npm run bench -- memory`: the peak RSS of a first `wsmirror sync` (through the launcher, as the
// service starts it) by the shape of what it mirrors, into SQLite and Postgres: one small table
// (the floor), many small tables, one wide table, records of 200 KB, two records of 6 MB.
//
//   npm run bench -- memory [--shapes=small,tables,wide,large,huge] [--dialects=sqlite,postgres]
//     [--tables=300] [--table-fields=4] [--width=210] [--wide-records=20000] [--large-records=1200]
//     [--large-bytes=200000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FieldType } from '../src/api/index.ts';
import { daemonEnv, runWsmirror, spawnEmulator } from '../test/helpers/processes.ts';
import { field } from '../test/helpers/schema.ts';
import { UpstreamWorkspace } from '../test/helpers/workspace.ts';
import { freshBundle } from './fresh-bundle.ts';
import { dropSchema } from './pg-schema.ts';
import type { BenchOptions } from './run.ts';

const SHAPES = ['small', 'tables', 'wide', 'large', 'huge'] as const;
type Shape = (typeof SHAPES)[number];

const MiB = (bytes: number | undefined) => (bytes === undefined ? null : Math.round((bytes / 1048576) * 10) / 10);

/** Fills the module `shape` upstream; returns what it holds, in words. */
async function seed(ws: UpstreamWorkspace, shape: Shape, options: BenchOptions): Promise<string> {
  await ws.createModule(shape);
  switch (shape) {
    case 'small': {
      await ws.createTable(shape, 't', { hasHistory: true }, [field('name', 'string'), field('amount', 'number')]);
      await ws.createRecords(shape, 't', Array.from({ length: 1000 }, (_, i) => ({ name: `r${i}`, amount: i })));
      return '1 table of 2 fields, 1,000 records';
    }
    case 'tables': {
      const count = Number(options['tables'] ?? 300);
      const width = Number(options['table-fields'] ?? 4);
      for (let t = 0; t < count; t++) await ws.createTable(shape, `t${t}`, { hasHistory: t % 2 === 0 });
      for (let t = 0; t < count; t++) {
        await ws.addFields(shape, `t${t}`, [
          field('name', 'string'), field('amount', 'number'),
          field('ref', 'reference', { refTableName: `t${(t + 1) % count}` }),
          field('stage', 'choice', { options: [{ name: 'a' }, { name: 'b' }] }),
          ...Array.from({ length: Math.max(0, width - 4) }, (_, i) => field(`x${i}`, i % 2 === 0 ? 'string' : 'number')),
        ]);
        await ws.createRecords(shape, `t${t}`, Array.from({ length: 10 }, (_, i) => ({ name: `row ${i}`, amount: i, stage: 'a' })));
      }
      return `${count} tables of ${Math.max(4, width)} fields, 10 records each`;
    }
    case 'wide': {
      const width = Number(options['width'] ?? 210);
      const records = Number(options['wide-records'] ?? 20_000);
      const types: FieldType[] = ['string', 'number', 'boolean', 'date', 'timestamp', 'string', 'number'];
      const fields = Array.from({ length: width }, (_, i) => field(`c${i}`, types[i % types.length]!));
      await ws.createTable(shape, 'w', { hasHistory: true }, fields);
      const value = (type: FieldType, r: number, i: number) =>
        type === 'string' ? `r${r}-${i}` : type === 'number' ? r * 1.5 + i : type === 'boolean' ? (r + i) % 2 === 0
          : type === 'date' ? `20${10 + (r % 90)}-0${1 + (i % 9)}-1${r % 9}` : `2026-01-01T00:00:${String(r % 60).padStart(2, '0')}.000Z`;
      for (let from = 0; from < records; from += 500) {
        await ws.createRecords(shape, 'w', Array.from({ length: Math.min(500, records - from) }, (_, k) =>
          Object.fromEntries(fields.map((f, i) => [f.name, value(f.type, from + k, i)]))));
      }
      return `1 table of ${width} fields, ${records} records`;
    }
    case 'large': {
      const records = Number(options['large-records'] ?? 1200);
      const bytes = Number(options['large-bytes'] ?? 200_000);
      await ws.createTable(shape, 'docs', { hasHistory: true }, [field('body', 'string'), field('n', 'number')]);
      const body = 'y'.repeat(bytes);
      const perRequest = Math.max(1, Math.floor(5_000_000 / bytes));
      await ws.createRecords(shape, 'docs', Array.from({ length: records }, (_, n) => ({ body, n })), perRequest);
      return `1 table, ${records} records of ${bytes} characters`;
    }
    case 'huge': {
      await ws.createTable(shape, 'docs', { hasHistory: true }, [field('body', 'string'), field('n', 'number')]);
      await ws.createRecords(shape, 'docs', Array.from({ length: 20 }, (_, n) => ({ body: `small ${n}`, n })));
      // One text of one-byte characters, one of characters outside Latin-1 (two bytes each in
      // a JavaScript string, four in UTF-8): each about 6 MB of JSON, the API's payload limit.
      await ws.createRecords(shape, 'docs', [{ body: 'x'.repeat(6_000_000), n: 20 }], 1);
      await ws.createRecords(shape, 'docs', [{ body: '\u{1F469}'.repeat(1_500_000), n: 21 }], 1);
      return '1 table of 22 records, two of them of 6 MB';
    }
  }
}

export async function run(options: BenchOptions = {}) {
  const shapes = String(options['shapes'] ?? SHAPES.join(',')).split(',') as Shape[];
  const dialects = String(options['dialects'] ?? 'sqlite,postgres').split(',');
  const pgUrl = process.env['WSMIRROR_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  const emu = await spawnEmulator();
  const out: Record<string, unknown> = { bundle: await freshBundle() };
  try {
    const ws = new UpstreamWorkspace(emu);
    const described: Record<string, string> = {};
    for (const shape of shapes) described[shape] = await seed(ws, shape, options);
    // Past the default 10 s lookback, so a backfill's catch-up does not read its rows again.
    await new Promise((r) => setTimeout(r, 11_000));
    let n = 0;
    for (const shape of shapes) {
      const byDialect: Record<string, unknown> = { holds: described[shape] };
      for (const dialect of dialects) {
        const schema = dialect === 'postgres' ? `wsm_bench_mem_${Date.now()}_${++n}` : undefined;
        const url = dialect === 'postgres' ? pgUrl : `sqlite:${join(dir, `memory-${++n}.db`)}`;
        const started = performance.now();
        const result = await runWsmirror(['sync', '--json'], daemonEnv(emu, { url, pgSchema: schema }, { WSMIRROR_TABLES_INCLUDE: `${shape}.*` }), { launcher: true });
        const measured = { peakRssMiB: MiB(result.peakRssBytes), wallMs: Math.round(performance.now() - started), cpuMs: Math.round(result.cpuMs ?? 0) };
        if (result.code === 0) {
          const report = JSON.parse(result.stdout) as { tables: { upserted: number }[] };
          byDialect[dialect] = { ...measured, rows: report.tables.reduce((sum, t) => sum + t.upserted, 0) };
        } else {
          // A process that ran out of heap is a result too: the end of its output says how it ended.
          byDialect[dialect] = { ...measured, exit: result.code, signal: result.signal, stderrEnd: result.stderr.slice(-300) };
        }
        if (schema) await dropSchema(pgUrl, schema);
      }
      out[shape] = byDialect;
    }
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
