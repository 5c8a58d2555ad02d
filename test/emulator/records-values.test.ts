import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODULE, allTypeFields, startRecordsFixture, valuesOf, type RecordsFixture } from './record-fixtures.ts';

// The value table of the spec, type by type: create and update shapes, canonical outputs.

let fx: RecordsFixture;
let target: string;
let options: Record<string, Record<string, string>>;

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'targets');
  await fx.ws.createTable(MODULE, 'things', {}, allTypeFields());
  // Targets 1 to 7: the dchoice/dmulti cases pick among them (their selection is `select targets`).
  target = (await fx.ws.createRecords(MODULE, 'targets', Array.from({ length: 7 }, () => ({}))))[0]!;
  const table = await fx.ws.getTable(MODULE, 'things');
  options = {};
  for (const f of table.fields) {
    if (Array.isArray(f.options)) options[f.name] = Object.fromEntries(f.options.map((o: any) => [o.name, o.id]));
  }
});
afterAll(() => fx.emu.close());

async function create(values: Record<string, unknown>) {
  return fx.api('POST', fx.records('things'), { records: [values] });
}

async function createOk(values: Record<string, unknown>): Promise<string> {
  const res = await create(values);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.ids[0];
}

async function update(id: string, values: Record<string, unknown>) {
  return fx.api('PATCH', fx.records('things'), { records: [{ id, ...values }] });
}

interface Case {
  field: string;
  /** [sent, stored] pairs accepted on create */
  createOk: [unknown, unknown][];
  createBad: unknown[];
  updateOk: [unknown, unknown][];
  updateBad: unknown[];
}

const TS = '2024-05-06T07:08:09.123Z';
const TS_MS = Date.parse(TS);

function cases(): Case[] {
  const o = options;
  return [
    { field: 's', createOk: [['abc', 'abc'], ['', '']], createBad: [5, true, ['a']], updateOk: [['x', 'x']], updateBad: [5] },
    { field: 'h', createOk: [['<b>x</b>', '<b>x</b>']], createBad: [1], updateOk: [['<i>y</i>', '<i>y</i>']], updateBad: [{}] },
    {
      field: 'n', createOk: [[1.5, 1.5], [-3, -3], [0, 0]], createBad: ['12', true, 'abc'],
      updateOk: [[7, 7], ['12', 12], [' -1.5e2 ', -150], ['.5', 0.5]], updateBad: ['abc', '', true, '1,5'],
    },
    {
      field: 'b', createOk: [[true, true], [false, false]], createBad: [1, 0, 'true'],
      updateOk: [[false, false], [true, true]], updateBad: [1, 0, 'false'],
    },
    {
      field: 'c', createOk: [[o.c!.open!, o.c!.open!], ['closed', o.c!.closed!]],
      createBad: ['nope', [o.c!.open!], '', 3],
      updateOk: [[o.c!.closed!, o.c!.closed!], [['open'], o.c!.open!], [[o.c!.closed!], o.c!.closed!], [[], null]],
      updateBad: [['open', 'closed'], 'nope', 3],
    },
    {
      field: 'm', createOk: [[[o.m!.red!, 'green'], [o.m!.red!, o.m!.green!]], [[], []]],
      createBad: ['red', ['red', 'red'], ['red', o.m!.red!], ['purple']],
      updateOk: [[['blue'], [o.m!.blue!]]], updateBad: ['red', [1]],
    },
    { field: 'col', createOk: [['#a1B2c3', '#a1B2c3']], createBad: ['red', '#abc', '#a1b2c3ff'], updateOk: [['#000000', '#000000']], updateBad: ['000000'] },
    {
      field: 'd', createOk: [['2024-02-29', '2024-02-29']], createBad: ['2023-02-29', '2024-13-01', 0, '2024-01-01T00:00Z'],
      updateOk: [['2024-03-01', '2024-03-01'], [0, '1970-01-01'], ['2024-03-01T23:59:59Z', '2024-03-01'], [TS_MS, '2024-05-06']],
      updateBad: ['yesterday', 1.5, '2024-03-01T10:00'],
    },
    {
      field: 'ts', createOk: [['2024-01-01T10:00Z', '2024-01-01T10:00:00.000Z'], [TS, TS], ['2024-01-01T10:00:00.1234Z', '2024-01-01T10:00:00.123Z']],
      createBad: [TS_MS, '2024-01-01T10:00:00', '2024-01-01', '2024-02-30T00:00Z'],
      updateOk: [[TS_MS, TS], [TS, TS]], updateBad: ['now', 1.5],
    },
    { field: 't', createOk: [['09:30', '09:30'], ['23:59', '23:59']], createBad: ['9:30', '24:00', '09:30:00'], updateOk: [['00:00', '00:00']], updateBad: ['12:60'] },
    {
      field: 'ti', createOk: [['09:00-17:30', '09:00-17:30']], createBad: ['01:30:00', '9:00-17:00'],
      updateOk: [['01:30:00', '01:30:00']], updateBad: ['09:00-17:00', '1:30'],
    },
    {
      field: 'ap',
      createOk: [['[2024-01-01T10:00Z,2024-01-01T11:30Z)', '[2024-01-01T10:00:00.000Z,2024-01-01T11:30:00.000Z)']],
      createBad: ['[2024-01-01T11:00Z,2024-01-01T10:00Z)', '2024-01-01T10:00Z', TS_MS, '[2024-01-01T10:00Z,2024-01-01T11:00Z]'],
      updateOk: [
        ['[2024-01-01T10:00:00Z,2024-01-01T10:15:00Z)', '[2024-01-01T10:00:00.000Z,2024-01-01T10:15:00.000Z)'],
        [TS, `[${TS},${TS})`],
        [TS_MS, `[${TS},${TS})`],
      ],
      updateBad: ['soon'],
    },
    {
      field: 'ic', createOk: [['star', 'star']], createBad: ['', 5],
      updateOk: [
        ['{"icon":"heart","filling":1,"color":"#ff0000"}', '{"icon":"heart","color":"#ff0000","filling":1}'],
        ['{"icon":"heart"}', 'heart'],
      ],
      updateBad: ['star', '{"color":"#ff0000"}', '{"icon":"x","extra":1}'],
    },
    { field: 'fi', createOk: [['file-1', 'file-1']], createBad: [1], updateOk: [['file-2', 'file-2']], updateBad: [false] },
    { field: 'u', createOk: [['user-1', 'user-1']], createBad: [1], updateOk: [['user-2', 'user-2']], updateBad: [[]] },
    {
      field: 'r', createOk: [[Number(target), Number(target)]], createBad: [target, 999999, 0, 1.5],
      updateOk: [[Number(target), Number(target)]], updateBad: [999999, 'abc'],
    },
    { field: 'dc', createOk: [[5, '5'], ['6', '6']], createBad: ['x', -1], updateOk: [['7', '7']], updateBad: [true] },
    { field: 'dm', createOk: [[[5, '6'], ['5', '6']]], createBad: ['5', [5, '5']], updateOk: [[['7'], ['7']]], updateBad: [5] },
  ];
}

describe('record values by field type', () => {
  it('accepts each create shape and returns its canonical form', async () => {
    for (const c of cases()) {
      for (const [sent, stored] of c.createOk) {
        const id = await createOk({ [c.field]: sent });
        expect((await valuesOf(fx, 'things', id))[c.field], `${c.field} ← ${JSON.stringify(sent)}`).toEqual(stored);
      }
    }
  });

  it('rejects each invalid create value with 400 naming the record and field', async () => {
    for (const c of cases()) {
      for (const sent of c.createBad) {
        const res = await create({ [c.field]: sent });
        expect(res.status, `${c.field} ← ${JSON.stringify(sent)}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.message).toContain(`body.records[0].${c.field}`);
      }
    }
  });

  it('accepts each update shape and returns its canonical form', async () => {
    const id = await createOk({});
    for (const c of cases()) {
      for (const [sent, stored] of c.updateOk) {
        const res = await update(id, { [c.field]: sent });
        expect(res.status, `${c.field} ← ${JSON.stringify(sent)}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body).toEqual({ data: { updatedIds: [id] } });
        expect((await valuesOf(fx, 'things', id))[c.field], `${c.field} ← ${JSON.stringify(sent)}`).toEqual(stored);
      }
    }
  });

  it('rejects each invalid update value with 400 and keeps the old value', async () => {
    const id = await createOk({});
    for (const c of cases()) {
      const before = await valuesOf(fx, 'things', id);
      for (const sent of c.updateBad) {
        const res = await update(id, { [c.field]: sent });
        expect(res.status, `${c.field} ← ${JSON.stringify(sent)}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.message).toContain(`body.records[0].${c.field}`);
      }
      expect(await valuesOf(fx, 'things', id)).toEqual(before);
    }
  });

  it('null clears every writable type on update, and leaves it empty on create', async () => {
    const full: Record<string, unknown> = {};
    for (const c of cases()) full[c.field] = c.createOk[0]![0];
    const id = await createOk(full);
    const before = await valuesOf(fx, 'things', id);
    for (const c of cases()) expect(before[c.field], c.field).not.toBeNull();

    const cleared = Object.fromEntries(cases().map((c) => [c.field, null]));
    expect((await update(id, cleared)).status).toBe(200);
    const after = await valuesOf(fx, 'things', id);
    for (const c of cases()) expect(after[c.field], c.field).toBeNull();

    const empty = await createOk(cleared);
    const values = await valuesOf(fx, 'things', empty);
    expect(Object.values(values).every((v) => v === null)).toBe(true);
  });

  it('rejects writes to computed fields (function, reverse), even null', async () => {
    const id = await createOk({});
    for (const name of ['fn', 'rev']) {
      for (const value of [1, 'x', null]) {
        const created = await create({ [name]: value });
        expect(created.status).toBe(400);
        expect(created.body.error.message).toMatch(new RegExp(`body\\.records\\[0\\]\\.${name}: .*computed`));
        expect((await update(id, { [name]: value })).status).toBe(400);
      }
    }
    // Computed fields are listed, without a value.
    const values = await valuesOf(fx, 'things', id);
    expect(values.fn).toBeNull();
    expect(values.rev).toBeNull();
  });

  it('filters on each type by its stored value, in either the create or the update shape', async () => {
    const full: Record<string, unknown> = {};
    for (const c of cases()) full[c.field] = c.createOk[0]![0];
    const id = await createOk({ ...full, ti: '08:00-09:00', ic: 'moon', s: 'filter me' });
    for (const [name, value] of [
      ['ic', 'moon'], ['ti', '08:00-09:00'], ['n', '1.5'], ['d', '2024-02-29'], ['c', 'open'], ['m', 'green'],
      ['ts', Date.parse('2024-01-01T10:00Z')], ['r', target], ['b', true], ['dm', 6], ['dc', '5'],
    ] as const) {
      const res = await fx.api('GET', `${fx.records('things')}?filter=${encodeURIComponent(JSON.stringify({ s: 'filter me', [name]: value }))}`);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.map((r: any) => r.id), name).toEqual([id]);
    }
  });

  it('lists every current field, in field order, null when unset', async () => {
    const id = await createOk({ s: 'only' });
    const values = await valuesOf(fx, 'things', id);
    expect(Object.keys(values)).toEqual(allTypeFields().map((f) => f.name));
    expect(values.s).toBe('only');
  });
});
