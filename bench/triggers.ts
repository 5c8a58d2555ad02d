// `npm run bench -- triggers`: the cost of capturing local edits. A bulk UPDATE of every row of a
// 100,000-row table, made by another client (as psql or a BI tool would), with the capture
// triggers in place and without them, in the same run, on SQLite and Postgres. `--columns=1|2`:
// how many columns the UPDATE changes (each changed column of each row is one outbox entry);
// `--extra=N`: N more number columns that the UPDATE leaves alone (a wider table).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DIALECTS } from '../src/mirror/dialects.ts';
import { openMirror } from '../src/mirror/open-mirror.ts';
import { planSchema } from '../src/mirror/schema-planner.ts';
import { quoteIdent } from '../src/mirror/sql-text.ts';
import type { Mirror } from '../src/mirror/mirror.ts';
import type { BenchOptions } from './run.ts';

const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const TABLE = 'bench__deals';
/** The bench table: title, amount, paid, a computed total, and `extra` more number columns. */
function workspace(extra: number) {
  const extraFields = Array.from({ length: extra }, (_, i) => ({ id: `x${i + 1}`, name: `n${i + 1}`, type: 'number' as const, labels: {} }));
  return {
    name: 'bench',
    modules: [{
      id: 'm1', name: 'bench', labels: {},
      tables: [{
        id: 't1', name: 'deals', labels: {}, hasHistory: true,
        fields: [
          { id: 'f1', name: 'title', type: 'string' as const, labels: {} },
          { id: 'f2', name: 'amount', type: 'number' as const, labels: {} },
          { id: 'f3', name: 'paid', type: 'boolean' as const, labels: {} },
          { id: 'f4', name: 'total', type: 'function' as const, labels: {} },
          ...extraFields,
        ],
      }],
    }],
  };
}

async function fill(mirror: Mirror, rows: number, extra: number): Promise<void> {
  await mirror.applySchemaPlan(planSchema(await mirror.readCatalog(), workspace(extra)));
  for (let i = 0; i < rows; i += 5_000) {
    const upserts = Array.from({ length: Math.min(5_000, rows - i) }, (_, j) => {
      const values: Record<string, unknown> = { title: `deal ${i + j}`, amount: i + j, paid: false, total: 1 };
      for (let k = 1; k <= extra; k++) values[`n${k}`] = k;
      return { id: i + j + 1, values };
    });
    await mirror.applyRows('t1', { upserts });
  }
}

/** Milliseconds of `update` (one bulk UPDATE), best of `repeat`. */
async function timed(update: () => Promise<void>, reset: () => Promise<void>, repeat: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < repeat; i++) {
    await reset();
    const start = performance.now();
    await update();
    best = Math.min(best, performance.now() - start);
  }
  return Math.round(best);
}

function captureTable(extra: number) {
  return {
    tableId: 't1', sqlName: TABLE,
    fields: [
      { fieldId: 'f1', columnName: 'title', readOnly: false }, { fieldId: 'f2', columnName: 'amount', readOnly: false },
      { fieldId: 'f3', columnName: 'paid', readOnly: false }, { fieldId: 'f4', columnName: 'total', readOnly: true },
      ...Array.from({ length: extra }, (_, i) => ({ fieldId: `x${i + 1}`, columnName: `n${i + 1}`, readOnly: false })),
    ],
  };
}

function assignments(columns: number): string {
  return columns === 1 ? `"amount" = "amount" + 1` : `"amount" = "amount" + 1, "paid" = NOT "paid"`;
}

async function sqliteFigures(rows: number, repeat: number, columns: number, extra: number) {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-triggers-'));
  try {
    const path = join(dir, 'mirror.db');
    const mirror = await openMirror(`sqlite:${path}`);
    await fill(mirror, rows, extra);
    await mirror.close();
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    const names = { qualify: quoteIdent };
    const update = async () => void db.prepare(`UPDATE "${TABLE}" SET ${assignments(columns)}`).run();
    const reset = async () => void db.prepare(`DELETE FROM "_wsmirror_outbox"`).run();
    const withTriggers = await timed(update, reset, repeat);
    const outboxRows = (db.prepare(`SELECT count(*) AS n FROM "_wsmirror_outbox"`).get() as { n: number }).n;
    for (const s of DIALECTS.sqlite.dropCaptureSql(names, captureTable(extra))) db.exec(s);
    const without = await timed(update, reset, repeat);
    // The floor of any row trigger: one that does nothing, and one that appends a bare row to an
    // unindexed table (what the least capture could write).
    db.exec(`CREATE TRIGGER "bench_empty" AFTER UPDATE ON "${TABLE}" BEGIN SELECT 1; END`);
    const emptyTrigger = await timed(update, reset, repeat);
    db.exec(`DROP TRIGGER "bench_empty"; CREATE TABLE "bench_log" ("id" INTEGER, "v" TEXT)`);
    db.exec(`CREATE TRIGGER "bench_append" AFTER UPDATE ON "${TABLE}" BEGIN INSERT INTO "bench_log" VALUES (NEW."id", NEW."amount"); END`);
    const appendTrigger = await timed(update, async () => { await reset(); db.exec(`DELETE FROM "bench_log"`); }, repeat);
    db.close();
    return {
      withTriggersMs: withTriggers, withoutTriggersMs: without, ratio: round(withTriggers / without), outboxRowsPerUpdate: outboxRows,
      emptyTriggerRatio: round(emptyTrigger / without), appendTriggerRatio: round(appendTrigger / without),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresFigures(url: string, rows: number, repeat: number, columns: number, extra: number) {
  const schema = `wsm_bench_triggers_${process.pid}`;
  const mirror = await openMirror(url, { pgSchema: schema });
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await fill(mirror, rows, extra);
    const names = { qualify: (n: string) => `${quoteIdent(schema)}.${quoteIdent(n)}` };
    const table = names.qualify(TABLE);
    const update = async () => void (await c.query(`UPDATE ${table} SET ${assignments(columns)}`));
    const reset = async () => void (await c.query(`TRUNCATE ${names.qualify('_wsmirror_outbox')}`));
    const withTriggers = await timed(update, reset, repeat);
    const outboxRows = Number((await c.query(`SELECT count(*) AS n FROM ${names.qualify('_wsmirror_outbox')}`)).rows[0].n);
    for (const s of DIALECTS.postgres.dropCaptureSql(names, captureTable(extra))) await c.query(s);
    const without = await timed(update, reset, repeat);
    // The floor of a statement trigger over transition tables: one that does nothing with them,
    // and one that copies the new ids and values into an unindexed table (the least capture).
    await c.query(`CREATE TABLE ${names.qualify('bench_log')} (id bigint, v double precision)`);
    await c.query(`CREATE FUNCTION ${names.qualify('bench_empty')}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await c.query(`CREATE FUNCTION ${names.qualify('bench_append')}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO ${names.qualify('bench_log')} SELECT n.id, n.amount FROM bench_new n; RETURN NULL; END $$`);
    await c.query(`CREATE TRIGGER bench_t AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS bench_old NEW TABLE AS bench_new
      FOR EACH STATEMENT EXECUTE FUNCTION ${names.qualify('bench_empty')}()`);
    const emptyTrigger = await timed(update, reset, repeat);
    await c.query(`DROP TRIGGER bench_t ON ${table}`);
    await c.query(`CREATE TRIGGER bench_t AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS bench_old NEW TABLE AS bench_new
      FOR EACH STATEMENT EXECUTE FUNCTION ${names.qualify('bench_append')}()`);
    const appendTrigger = await timed(update, async () => { await reset(); await c.query(`TRUNCATE ${names.qualify('bench_log')}`); }, repeat);
    return {
      withTriggersMs: withTriggers, withoutTriggersMs: without, ratio: round(withTriggers / without), outboxRowsPerUpdate: outboxRows,
      emptyTriggerRatio: round(emptyTrigger / without), appendTriggerRatio: round(appendTrigger / without),
    };
  } finally {
    await mirror.close();
    await c.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    await c.end();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

export async function run(options: BenchOptions = {}) {
  const rows = Number(options.rows ?? 100_000);
  const repeat = Number(options.repeat ?? 3);
  const pgUrl = typeof options['pg-url'] === 'string' ? options['pg-url'] : (process.env['WSMIRROR_TEST_PG_URL'] ?? DEFAULT_PG_URL);
  const columns = Number(options.columns ?? 1) === 2 ? 2 : 1;
  const extra = Number(options['extra'] ?? 0);
  return {
    rows, repeat, columns, writableColumns: 3 + extra,
    sqlite: await sqliteFigures(rows, repeat, columns, extra),
    postgres: await postgresFigures(pgUrl, rows, repeat, columns, extra),
  };
}
