import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import { forEachDialect, testPgUrl } from '../helpers/dialects.ts';
import { module, sync, table, field, workspace } from './fixtures.ts';

const WS = workspace(module('m1', 'crm', [table('t1', 'deals', [field('fa', 'title', 'string')])]));

describe('openMirror({ mustExist: true }) on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-existing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('does not create a missing file, and names it in a ConfigError', async () => {
    const file = join(dir, 'missing.db');
    const error = await openMirror(`sqlite:${file}`, { mustExist: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/does not exist/);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a SQLite file that is not a mirror, without writing a catalog into it', async () => {
    const file = join(dir, 'other.db');
    const db = new Database(file);
    db.exec('CREATE TABLE mine (x INTEGER)');
    db.close();
    const error = await openMirror(`sqlite:${file}`, { mustExist: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/not a wsmirror mirror/);
    const check = new Database(file, { readonly: true });
    const names = (check.prepare(`SELECT name FROM sqlite_schema`).all() as { name: string }[]).map((r) => r.name);
    check.close();
    expect(names).toEqual(['mine']);
  });

  it('refuses a file that is not a database at all', async () => {
    const file = join(dir, 'text.db');
    writeFileSync(file, 'not a database '.repeat(100));
    await expect(openMirror(`sqlite:${file}`, { mustExist: true })).rejects.toThrow(ConfigError);
  });
});

forEachDialect('openMirror({ mustExist: true })', ({ dialect, fresh }) => {
  it('opens an existing mirror and reads it', async () => {
    const t = await fresh();
    await sync(t.mirror, WS);
    const again = await openMirror(t.url, { mustExist: true, ...(t.pgSchema ? { pgSchema: t.pgSchema } : {}) });
    try {
      expect((await again.readCatalog()).tables.map((x) => x.sqlName)).toEqual(['crm__deals']);
      expect(await again.outboxSummary()).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it.runIf(dialect === 'postgres')('does not create a missing Postgres schema, and names it', async () => {
    const schema = `wsm_test_absent_${randomBytes(6).toString('hex')}`;
    const error = await openMirror(testPgUrl!, { mustExist: true, pgSchema: schema }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(schema);
    expect((error as Error).message).toMatch(/no wsmirror catalog/);
    const client = new pg.Client({ connectionString: testPgUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
