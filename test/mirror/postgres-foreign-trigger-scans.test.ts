import { randomBytes } from 'node:crypto';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import { foreignTriggerGuardSql, foreignTriggersQuery } from '../../src/mirror/postgres/foreign-triggers.ts';
import type { Mirror } from '../../src/mirror/mirror.ts';
import { quoteId } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * The two listings of foreign triggers (the guard before each daemon COMMIT, and the catalog read
 * of each cycle) reach pg_trigger through its index, from the few relations they name. Read whole,
 * it costs in proportion to every trigger of the database: an idle cycle of 100 tables took 1.1 s
 * instead of 0.36 s. The server's own count of the rows a transaction read
 * (pg_stat_xact_sys_tables) tells one from the other, whatever the load.
 */

const PG_URL = process.env['WSMIRROR_TEST_PG_URL']!;
const OTHER_TABLES = 300;
const schema = `wsm_scans_${randomBytes(6).toString('hex')}`;
const noise = `wsm_noise_${randomBytes(6).toString('hex')}`;
const client = new pg.Client({ connectionString: PG_URL });
let mirror: Mirror;

beforeAll(async () => {
  mirror = await openMirror(PG_URL, { pgSchema: schema });
  await sync(mirror, workspace(module('mod_crm', 'crm', [table('tbl_notes', 'notes', [field('fld_body', 'body', 'string')])])));
  await client.connect();
  // Other tables of the database, each with a trigger: what a whole read would walk through.
  const statements = [`CREATE SCHEMA ${quoteId(noise)}`, `CREATE FUNCTION ${quoteId(noise)}.t() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$`];
  for (let i = 0; i < OTHER_TABLES; i++) {
    statements.push(`CREATE TABLE ${quoteId(noise)}.t${i} (a int)`,
      `CREATE TRIGGER t BEFORE INSERT ON ${quoteId(noise)}.t${i} FOR EACH ROW EXECUTE FUNCTION ${quoteId(noise)}.t()`);
  }
  await client.query(statements.join(';\n'));
}, 60_000);

afterAll(async () => {
  await mirror?.close();
  await client.query(`DROP SCHEMA IF EXISTS ${quoteId(noise)} CASCADE; DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
  await client.end();
});

/**
 * Rows of pg_trigger that `run` read, by sequential scan or through an index, in a transaction
 * rolled back after. The counts are taken before and after: the server's pending counts can hold
 * earlier transactions' too. (pg_class is left out: the planner reads a catalog of a few hundred
 * rows whole where that is cheaper, as it would not in a database of 10,000 relations.)
 */
async function triggerRowsRead(run: () => Promise<unknown>): Promise<number> {
  const count = async () => Number((await client.query<{ n: string }>(
    `SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0) AS n
      FROM pg_catalog.pg_stat_xact_sys_tables WHERE relname = 'pg_trigger'`)).rows[0]!.n);
  await client.query('BEGIN');
  try {
    const before = await count();
    await run();
    return await count() - before;
  } finally {
    await client.query('ROLLBACK');
  }
}

it('the commit guard does not read every trigger of the database', async () => {
  const read = await triggerRowsRead(async () => {
    await client.query(`INSERT INTO ${quoteId(schema)}.${quoteId('crm__notes')} (${quoteId('body')}) VALUES ('x')`);
    await client.query(foreignTriggerGuardSql(schema));
  });
  expect(read).toBeLessThan(OTHER_TABLES / 10);
});

it('the catalog read lists the foreign triggers without reading every trigger of the database', async () => {
  // Kysely only compiles the query here (kysely's documented compile-only set-up); pg runs it.
  const compiler = new Kysely<never>({ dialect: {
    createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler(),
  } });
  const query = foreignTriggersQuery(compiler as never, schema);
  let found: unknown[] = [];
  const read = await triggerRowsRead(async () => {
    found = (await client.query(query.sql, [...query.parameters])).rows;
  });
  expect(found).toEqual([]);
  expect(read).toBeLessThan(OTHER_TABLES / 10);
});
