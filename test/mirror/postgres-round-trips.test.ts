import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Field } from '../../src/api/field.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import { startRoundTripCounter, type RoundTripCounter } from '../helpers/pg-round-trips.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * Against a Postgres server across a network every statement costs a round trip. Opening a new
 * mirror and creating its tables (a first sync; later schema changes re-create every table's
 * capture and view) takes a number of them that does not grow with the tables' fields: comments,
 * catalog rows, capture and views each go in one round trip.
 */

const PG_URL = process.env['WSMIRROR_TEST_PG_URL']!;
let counter: RoundTripCounter;
const schemas: string[] = [];

beforeAll(async () => {
  counter = await startRoundTripCounter(PG_URL);
});

afterAll(async () => {
  await counter?.close();
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  for (const schema of schemas) await c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  await c.end();
});

function fields(count: number): Field[] {
  return Array.from({ length: count }, (_, i) => i % 4 === 0
    ? field(`fld_${i}`, `pick_${i}`, 'choice', { options: [{ id: `o${i}a`, name: 'a', order: 1, labels: { '': 'A' } }, { id: `o${i}b`, name: 'b', order: 2, labels: { '': 'B' } }] })
    : field(`fld_${i}`, `text_${i}`, 'string'));
}

async function roundTrips(fieldCount: number): Promise<{ open: number; createTables: number }> {
  const schema = `wsm_trips_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  counter.reset();
  const mirror = await openMirror(counter.url, { pgSchema: schema });
  try {
    const open = counter.roundTrips;
    counter.reset();
    await sync(mirror, workspace(module('mod_crm', 'crm', [table('tbl_deals', 'deals', fields(fieldCount)), table('tbl_people', 'people', fields(fieldCount))])));
    return { open, createTables: counter.roundTrips };
  } finally {
    await mirror.close();
  }
}

it('opens a mirror and creates its tables in round trips that do not grow with the fields', async () => {
  const few = await roundTrips(4);
  const many = await roundTrips(40);
  expect(many.open).toBe(few.open);
  expect(many.createTables).toBe(few.createTables);
  // Two tables, with their catalog rows, capture and views: 95 round trips before they were
  // gathered, 491 with 40 fields each.
  expect(few.createTables).toBeLessThan(40);
});
