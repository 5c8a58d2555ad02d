import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { Mirror } from '../../src/mirror/mirror.ts';
import type { DialectName } from '../../src/mirror/dialect.ts';

/**
 * Runs a suite once per dialect, like kysely's own tests: `sqlite` on a real file in a temporary
 * directory, `postgres` on the server named by WSMIRROR_TEST_PG_URL. Every `fresh()` mirror gets
 * its own file or its own uniquely named schema, all removed after the suite, so suites run in
 * parallel. The test run's global setup (postgres-global-setup.ts) always provides the server;
 * Postgres is never skipped.
 *
 * Results are checked through a separate plain connection (`sql`), never through the mirror.
 */
export interface TestMirror {
  mirror: Mirror;
  dialect: DialectName;
  url: string;
  pgSchema: string | undefined;
  /** Runs SQL on a separate connection; placeholders are `?` on SQLite and `$1…` on Postgres. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** A quoted, schema-qualified table name for `sql`. */
  table(name: string): string;
  /** Opens another Mirror on the same database (e.g. to test re-opening). */
  reopen(): Promise<Mirror>;
}

export interface DialectContext {
  dialect: DialectName;
  /** A new, empty mirror and a separate connection to check it with. */
  fresh(): Promise<TestMirror>;
}

const PG_URL = process.env['WSMIRROR_TEST_PG_URL'];

export function quoteId(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function forEachDialect(title: string, suite: (ctx: DialectContext) => void): void {
  describe(`${title} [sqlite]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsmirror-test-'));
    const open: { mirrors: Mirror[]; dbs: Database.Database[] } = { mirrors: [], dbs: [] };
    let n = 0;
    afterAll(async () => {
      for (const m of open.mirrors) await m.close();
      for (const db of open.dbs) db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    suite({
      dialect: 'sqlite',
      async fresh() {
        const url = `sqlite:${join(dir, `mirror-${++n}.db`)}`;
        const mirror = await openMirror(url);
        open.mirrors.push(mirror);
        const db = new Database(url.slice('sqlite:'.length));
        open.dbs.push(db);
        return {
          mirror, dialect: 'sqlite', url, pgSchema: undefined,
          async sql<T>(text: string, params: unknown[] = []) {
            const stmt = db.prepare(text);
            if (stmt.reader) return stmt.all(...params) as T[];
            stmt.run(...params);
            return [];
          },
          table: (name) => quoteId(name),
          async reopen() {
            const again = await openMirror(url);
            open.mirrors.push(again);
            return again;
          },
        };
      },
    });
  });

  if (!PG_URL) {
    describe(`${title} [postgres]`, () => {
      it('has a PostgreSQL server to test against', () => {
        throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest (its global setup, test/helpers/postgres-global-setup.ts, provides a server) or set it');
      });
    });
    return;
  }
  describe(`${title} [postgres]`, () => {
    const schemas: string[] = [];
    const mirrors: Mirror[] = [];
    const clients: pg.Client[] = [];
    afterAll(async () => {
      for (const m of mirrors) await m.close();
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(s)} CASCADE`);
      } finally {
        await admin.end();
        for (const c of clients) await c.end();
      }
    });
    suite({
      dialect: 'postgres',
      async fresh() {
        const schema = `wsm_test_${randomBytes(6).toString('hex')}`;
        schemas.push(schema);
        const mirror = await openMirror(PG_URL, { pgSchema: schema });
        mirrors.push(mirror);
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        clients.push(client);
        return {
          mirror, dialect: 'postgres', url: PG_URL, pgSchema: schema,
          async sql<T>(text: string, params: unknown[] = []) {
            return (await client.query(text, params)).rows as T[];
          },
          table: (name) => `${quoteId(schema)}.${quoteId(name)}`,
          async reopen() {
            const again = await openMirror(PG_URL, { pgSchema: schema });
            mirrors.push(again);
            return again;
          },
        };
      },
    });
  });
}

/** Postgres URL for tests that need one directly (undefined only outside vitest; see forEachDialect). */
export const testPgUrl: string | undefined = PG_URL;

/** `tm.sql` with `?` placeholders on either dialect (Postgres numbers them), for tests that run the same SQL on both. */
export function questionMarkSql(tm: TestMirror) {
  return <T = Record<string, unknown>>(text: string, params: unknown[] = []) => {
    let n = 0;
    return tm.sql<T>(tm.dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text, params);
  };
}
