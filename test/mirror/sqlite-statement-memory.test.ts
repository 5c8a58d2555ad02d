import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { Mirror } from '../../src/mirror/mirror.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * better-sqlite3 frees a statement's native memory only when V8 collects its JS object, and V8
 * does not see that memory. A row upsert holds the program of every capture trigger of its table,
 * 17–23 KiB per column, so upserts of table layouts gone by must not stay reachable: these count
 * the upserts still alive after a full collection.
 */
describe('the SQLite mirror\'s prepared upserts under schema churn', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const prepare = Database.prototype.prepare;

  let dir: string;
  let mirror: Mirror;
  let upserts: { columns: number; ref: WeakRef<object> }[];
  let prepared: { text: string; ref: WeakRef<object> }[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsmirror-statements-'));
    mirror = await openMirror(`sqlite:${join(dir, 'mirror.db')}`);
    upserts = [];
    prepared = [];
    // Not a vi.spyOn: a spy keeps what each call returned.
    Database.prototype.prepare = function (this: Database.Database, text: string) {
      const stmt = prepare.call(this, text);
      prepared.push({ text, ref: new WeakRef(stmt) });
      const head = /^INSERT INTO "shop__[^"]+" \(([^)]*)\)/.exec(text.trim());
      if (head && text.includes('ON CONFLICT')) upserts.push({ columns: head[1]!.split(',').length, ref: new WeakRef(stmt) });
      return stmt;
    } as typeof prepare;
  });
  afterEach(async () => {
    Database.prototype.prepare = prepare;
    await mirror.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function collect(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      await new Promise((done) => setImmediate(done));
      gc();
    }
  }

  /** The upserts still reachable once V8 has collected everything it can. */
  async function liveUpserts(): Promise<{ columns: number }[]> {
    await collect();
    return upserts.filter((u) => u.ref.deref() !== undefined);
  }

  const rows = (count: number) => Array.from({ length: count }, (_, i) => ({ id: i + 1, values: { f0: `r${i}` } }));

  it('keeps only the upserts of a table\'s current columns', async () => {
    const fields = Array.from({ length: 10 }, (_, i) => field(`f${i}`, `f${i}`, 'string'));
    for (let change = 0; change < 30; change++) {
      fields.push(field(`g${change}`, `g${change}`, 'number'));
      await sync(mirror, workspace(module('m1', 'shop', [table('t1', 'orders', fields)])));
      // 60 rows: one statement of 50 rows, then ten of one.
      await mirror.applyRows('t1', { upserts: rows(60) });
    }
    expect(upserts.length).toBeGreaterThanOrEqual(60);
    expect((await liveUpserts()).length).toBeLessThanOrEqual(2);
  });

  it('bounds the upserts kept across many wide tables by their columns', async () => {
    const tables = Array.from({ length: 30 }, (_, t) =>
      table(`t${t}`, `wide${t}`, Array.from({ length: 40 }, (_, i) => field(`t${t}f${i}`, `f${i}`, 'string'))));
    await sync(mirror, workspace(module('m1', 'shop', tables)));
    for (const t of tables) await mirror.applyRows(t.id, { upserts: rows(60) });
    const live = await liveUpserts();
    // 2 × 30 × 42 = 2,520 columns were prepared; 17–23 KiB per column kept, about 9 MiB at most.
    expect(live.reduce((sum, u) => sum + u.columns, 0)).toBeLessThanOrEqual(500);
    // The table written last keeps its upserts.
    expect(live.length).toBeGreaterThanOrEqual(2);
  });

  it('keeps no statement of the DDL a schema change ran', async () => {
    // Each holds its text and program until V8 collects it, and none runs twice: the schema step
    // of a first sync of 300 tables of 4 fields ended 20 MiB higher with them than without.
    const tables = (from: number) => Array.from({ length: 20 }, (_, t) =>
      table(`t${t}`, `orders${t}`, Array.from({ length: 5 - from }, (_, i) => field(`t${t}f${from + i}`, `f${from + i}`, 'string'))));
    await sync(mirror, workspace(module('m1', 'shop', tables(0))));
    // Each table's first field dropped: its triggers and view made again around the ALTER.
    await sync(mirror, workspace(module('m1', 'shop', tables(1))));
    await collect();
    const ddl = prepared.filter((p) => /^\s*(CREATE|DROP|ALTER)\b/i.test(p.text));
    expect(ddl.filter((p) => p.ref.deref() !== undefined).map((p) => p.text.slice(0, 60))).toEqual([]);
  });
});
