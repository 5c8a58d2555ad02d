import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field, fieldsPath, ok } from '../helpers/schema.ts';
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
const filter = (f: unknown) => `filter=${encodeURIComponent(JSON.stringify(f))}`;

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

describe('filter on null', () => {
  it('matches every empty value: absent, null, "" and []', async () => {
    expect((await list(filter({ note: null }))).map((r) => r.id)).toEqual([ids[1], ids[3]]);
    expect((await list(filter({ tags: null }))).map((r) => r.id)).toEqual([ids[1], ids[2]]);
    expect((await list(filter({ note: [null, 'x'] }))).map((r) => r.id)).toEqual([ids[0], ids[1], ids[3]]);
  });
});

describe('filter on a choice', () => {
  it('the id of a removed option matches nothing, though records still hold it', async () => {
    const table = await fx.ws.getTable(MODULE, 'items');
    const stage = table.fields.find((f: any) => f.name === 'stage');
    const lost = stage.options.find((o: any) => o.name === 'lost').id;
    expect((await list(filter({ stage: lost }))).map((r) => r.id)).toEqual([ids[2]]);
    ok(await fx.api('PATCH', `${fieldsPath(MODULE, 'items')}/stage`, {
      options: stage.options.filter((o: any) => o.name !== 'lost'),
    }));
    expect(await list(filter({ stage: lost }))).toEqual([]);
    expect(await list(filter({ stage: [lost, 'lead'] }))).toHaveLength(1);
  });
});
