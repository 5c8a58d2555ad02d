// `npm run bench -- schema-size`: what the capture triggers of a SQLite mirror cost every
// connection to its file. SQLite parses the whole schema into memory when a connection first
// reads it, and every ALTER TABLE parses it again. The mirror makes `--tables` tables (default
// 300) of `--fields` writable fields (default 4: string, number, boolean, date in turn); then a new
// process opens the file with better-sqlite3 and reads the RSS its schema took (VmRSS after the
// first statement less before it), and times an `ALTER TABLE … RENAME COLUMN` (rolled back; best
// of `--repeat`, default 3).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openMirror } from '../src/mirror/open-mirror.ts';
import { planSchema } from '../src/mirror/schema-planner.ts';
import type { BenchOptions } from './run.ts';

const TYPES = ['string', 'number', 'boolean', 'date'] as const;

function workspace(tables: number, fields: number) {
  return {
    name: 'bench',
    modules: [{
      id: 'm1', name: 'bench', labels: {},
      tables: Array.from({ length: tables }, (_, t) => ({
        id: `t${t}`, name: `t${t}`, labels: {}, hasHistory: t % 2 === 0,
        fields: Array.from({ length: fields }, (_, f) => ({ id: `t${t}f${f}`, name: `c${f}`, type: TYPES[f % TYPES.length]!, labels: {} })),
      })),
    }],
  };
}

const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]);

/** In the child process: the schema's RSS and the ALTER's time on `path`. */
function measure(path: string, repeat: number): void {
  const before = rssKiB();
  const db = new Database(path);
  db.prepare('SELECT count(*) FROM "bench__t0"').get();
  const schemaKiB = rssKiB() - before;
  let alterMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeat; i++) {
    db.exec('BEGIN');
    const start = performance.now();
    db.exec('ALTER TABLE "bench__t0" RENAME COLUMN "c1" TO "c1_renamed"');
    alterMs = Math.min(alterMs, performance.now() - start);
    db.exec('ROLLBACK');
  }
  const triggerSqlBytes = (db.prepare(`SELECT sum(length(sql)) AS n FROM sqlite_schema WHERE type = 'trigger'`).get() as { n: number }).n;
  db.close();
  process.stdout.write(JSON.stringify({ schemaKiB, alterMs: Math.round(alterMs), triggerSqlBytes }));
}

export async function run(options: BenchOptions): Promise<unknown> {
  const tables = Number(options['tables'] ?? 300);
  const fields = Number(options['fields'] ?? 4);
  const repeat = Number(options['repeat'] ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'wsm-schema-size-'));
  try {
    const path = join(dir, 'mirror.db');
    const mirror = await openMirror(`sqlite:${path}`);
    await mirror.applySchemaPlan(planSchema(await mirror.readCatalog(), workspace(tables, fields)));
    await mirror.close();
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--measure', path, String(repeat)], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`measuring failed: ${child.stderr}`);
    return { tables, fieldsPerTable: fields, ...(JSON.parse(child.stdout) as object) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--measure') measure(process.argv[3]!, Number(process.argv[4]));
