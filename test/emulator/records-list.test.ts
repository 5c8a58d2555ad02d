import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

// The list's documented choices on empty values and options: "Empty means absent, null, "" or []",
// empties first ascending and last descending, and a choice value naming no option matches nothing.

let fx: RecordsFixture;
let ids: string[];
const list = async (query: string) => {
  const res = await fx.api('GET', `${fx.records('items')}?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; values: Record<string, unknown> }[];
};

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'items', {}, [
    field('tags', 'multi', { options: [{ name: 'a' }, { name: 'b' }] }),
    field('note', 'string'),
    field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'won' }, { name: 'lost' }] }),
  ]);
  ids = await fx.ws.createRecords(MODULE, 'items', [
    { tags: ['a'], note: 'x', stage: 'lead' },
    { tags: [], note: '' },
    { note: 'y', stage: 'lost' },
    { tags: ['b'], stage: 'won' },
  ]);
});
afterAll(() => fx.emu.close());

describe('sort', () => {
  it('an empty multi [] sorts with the empties: first ascending, last descending', async () => {
    const asc = (await list('sort=tags')).map((r) => r.id);
    expect(asc.slice(0, 2)).toEqual([ids[1], ids[2]]); // [] and absent, ties by id
    const desc = (await list('sort=-tags')).map((r) => r.id);
    expect(desc.slice(2)).toEqual([ids[1], ids[2]]);
  });

  it('an empty string "" sorts with the empties too', async () => {
    expect((await list('sort=note')).map((r) => r.id)).toEqual([ids[1], ids[3], ids[0], ids[2]]);
    expect((await list('sort=-note')).map((r) => r.id)).toEqual([ids[2], ids[0], ids[1], ids[3]]);
  });
});
