import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { Mirror } from '../../src/mirror/mirror.ts';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * Every `_wsmirror_*` table of a Postgres mirror takes rows from the daemon's role only, whatever
 * rights another role is granted on it until the next cycle revokes them: the catalog steers the
 * push (which upstream table an entry goes to, which fields are read-only) as the outbox holds
 * what is pushed. A writer granted UPDATE on the catalog swapped two tables' names, and its local
 * insert was created in the other upstream table.
 */
const suffix = randomBytes(4).toString('hex');
const owner = `wsm_cat_owner_${suffix}`;
const writer = `wsm_cat_writer_${suffix}`;
const schema = `wsm_cat_${suffix}`;
const admin = new pg.Client({ connectionString: testPgUrl });
let mirror: Mirror;

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE ROLE ${quoteId(owner)} LOGIN; CREATE ROLE ${quoteId(writer)} LOGIN`);
  await admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(owner)}`);
  mirror = await openMirror(pgUrlAs(owner), { pgSchema: schema });
  await sync(mirror, workspace(module('mod_m', 'm', [
    table('tbl_a', 'a', [field('fld_a', 'name', 'string')]), table('tbl_b', 'b', [field('fld_b', 'name', 'string')]),
  ])));
});

afterAll(async () => {
  await mirror?.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
  await dropRoles(admin, writer, owner);
  await admin.end();
});

it('a role granted writes on the catalog tables changes, adds and removes no row of them', async () => {
  const s = quoteId(schema);
  await admin.query(`GRANT USAGE ON SCHEMA ${s} TO ${quoteId(writer)}`);
  await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${quoteId(writer)}`);
  const client = new pg.Client({ connectionString: pgUrlAs(writer) });
  await client.connect();
  try {
    const swapped = await client.query(`UPDATE ${s}."_wsmirror_tables" SET "table_name" = 'b' WHERE "table_id" = 'tbl_a'`);
    expect(swapped.rowCount).toBe(0);
    const readOnly = await client.query(`UPDATE ${s}."_wsmirror_fields" SET "is_read_only" = true`);
    expect(readOnly.rowCount).toBe(0);
    const gone = await client.query(`DELETE FROM ${s}."_wsmirror_created"`);
    expect(gone.rowCount).toBe(0);
    await expect(client.query(`INSERT INTO ${s}."_wsmirror_cursors" ("name", "value") VALUES ('schema', '2000-01-01T00:00:00Z')`))
      .rejects.toThrow(/row-level security/);
    // Reading stays as granted (a BI role reads the catalog).
    expect((await client.query(`SELECT "table_name" FROM ${s}."_wsmirror_tables" ORDER BY 1`)).rows.map((r) => r.table_name)).toEqual(['a', 'b']);
  } finally {
    await client.end();
  }
  // The daemon's own writes are not held back.
  await sync(mirror, workspace(module('mod_m', 'm', [
    table('tbl_a', 'a', [field('fld_a', 'name', 'string'), field('fld_a2', 'more', 'string')]), table('tbl_b', 'b', [field('fld_b', 'name', 'string')]),
  ])));
  const fields = await admin.query(`SELECT count(*)::int AS n FROM ${s}."_wsmirror_fields" WHERE "table_id" = 'tbl_a'`);
  expect(fields.rows[0].n).toBe(2);
});
