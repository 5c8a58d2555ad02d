import { expect, it } from 'vitest';
import type { Field } from '../../src/api/field.ts';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import { countedPostgres } from '../helpers/pg-round-trips.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * Against a Postgres server across a network every statement costs a round trip. Opening a new
 * mirror and creating its tables (a first sync; later schema changes re-create every table's
 * capture and view), and adding fields to a table, take a number of them that does not grow with
 * the fields: comments, catalog rows, capture and views each go in one round trip.
 */

const counted = countedPostgres();

function fields(count: number): Field[] {
  return Array.from({ length: count }, (_, i) => i % 4 === 0
    ? field(`fld_${i}`, `pick_${i}`, 'choice', { options: [{ id: `o${i}a`, name: 'a', order: 1, labels: { '': 'A' } }, { id: `o${i}b`, name: 'b', order: 2, labels: { '': 'B' } }] })
    : field(`fld_${i}`, `text_${i}`, 'string'));
}

async function roundTrips(fieldCount: number): Promise<{ open: number; createTables: number; addFields: number }> {
  const { counter } = counted;
  counter.reset();
  const mirror = await openMirror(counter.url, { pgSchema: counted.newSchema('wsm_trips') });
  try {
    const open = counter.roundTrips;
    counter.reset();
    const people = table('tbl_people', 'people', fields(fieldCount));
    const dealFields = fields(fieldCount);
    await sync(mirror, workspace(module('mod_crm', 'crm', [table('tbl_deals', 'deals', dealFields), people])));
    const createTables = counter.roundTrips;
    counter.reset();
    // As many fields again, among them references to the other table (indexed).
    const added = fields(fieldCount).map((f, i) => i % 4 === 1
      ? field(`new_${f.id}`, `ref_${i}`, 'reference', { refTableId: 'tbl_people' })
      : { ...f, id: `new_${f.id}`, name: `new_${f.name}` });
    await sync(mirror, workspace(module('mod_crm', 'crm', [table('tbl_deals', 'deals', [...dealFields, ...added]), people])));
    return { open, createTables, addFields: counter.roundTrips };
  } finally {
    await mirror.close();
  }
}

it('opens a mirror, creates its tables and adds fields in round trips that do not grow with the fields', async () => {
  const few = await roundTrips(4);
  const many = await roundTrips(40);
  expect(many.open).toBe(few.open);
  expect(many.createTables).toBe(few.createTables);
  expect(many.addFields).toBe(few.addFields);
  // Two tables, with their catalog rows, capture and views: 95 round trips before they were
  // gathered, 491 with 40 fields each; adding 4 or 40 fields to one of them, 45 or 270. Now 36
  // and 35 on PostgreSQL 15, 40 and 40 on 18 (four more there, already before a touched table's
  // readable view was made again in place, which costs a round trip of its own per table on each
  // side of the DDL, so that a refusal names its table).
  expect(few.createTables).toBeLessThan(45);
  expect(few.addFields).toBeLessThan(45);
});
