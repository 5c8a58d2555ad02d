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
 * 7–12 KiB per column, so upserts of table layouts gone by must not stay reachable: these count
 * the upserts still alive after a full collection.
 */
describe('the SQLite mirror\'s prepared upserts under schema churn', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const prepare = Database.prototype.prepare;

  let dir: string;
  let mirror: Mirror;
  let upserts: { columns: number; ref: WeakRef<object> }[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsmirror-statements-'));
    mirror = await openMirror(`sqlite:${join(dir, 'mirror.db')}`);
    upserts = [];
    // Not a vi.spyOn: a spy keeps what each call returned.
    Database.prototype.prepare = function (this: Database.Database, text: string) {
      const stmt = prepare.call(this, text);
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

  /** The upserts still reachable once V8 has collected everything it can. */
  async function liveUpserts(): Promise<{ columns: number }[]> {
    for (let i = 0; i < 2; i++) {
      await new Promise((done) => setImmediate(done));
      gc();
    }
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
    // 2 × 30 × 42 = 2,520 columns were prepared; about a tenth of a MiB per 10 columns kept.
    expect(live.reduce((sum, u) => sum + u.columns, 0)).toBeLessThanOrEqual(1_200);
    // The table written last keeps its upserts.
    expect(live.length).toBeGreaterThanOrEqual(2);
  });
});
