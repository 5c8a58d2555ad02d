import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { field } from '../helpers/schema.ts';
import { MODULE, allRecords, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

// Property: a batch holding one invalid item (anywhere among valid ones) is refused as a whole and
// leaves the entire state unchanged: workspace, every record, and both change logs.

let fx: RecordsFixture;
let itemIds: string[];
let refIds: number[];
const EXTRA = ['x1', 'x2', 'x3', 'x4'];
const EPOCH = '2000-01-01T00:00:00Z';
const TABLES = ['refs', 'items'];

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'refs');
  await fx.ws.createTable(MODULE, 'items', { hasHistory: true }, [
    field('name', 'string', { required: true }),
    field('qty', 'number'),
    field('status', 'choice', { options: [{ name: 'a' }, { name: 'b' }] }),
    field('email', 'string', { unique: true }),
    field('ref', 'reference', { refTableName: 'refs' }),
    ...EXTRA.map((n) => field(n, 'string')),
  ]);
  refIds = (await fx.ws.createRecords(MODULE, 'refs', [{}, {}, {}])).map(Number);
  itemIds = await fx.ws.createRecords(MODULE, 'items', [
    { name: 'one', email: 'taken@example.com', qty: 1 },
    { name: 'two', status: 'a', ref: refIds[0] },
    { name: 'three' },
    { name: 'four', qty: 4 },
  ]);
});
afterAll(() => fx.emu.close());

async function pages(path: string) {
  const out: unknown[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await fx.api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&offset=${offset}`);
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    if (!res.body.page_info.has_more) return out;
  }
}

async function snapshot() {
  const workspace = await fx.api('GET', fx.emu.base);
  expect(workspace.status).toBe(200);
  const records: Record<string, unknown> = {};
  for (const t of TABLES) records[t] = await allRecords(fx, t);
  return {
    workspace: workspace.body.data,
    records,
    schemaChanges: await pages(`${fx.emu.base}/schema/changes?since=${EPOCH}`),
    recordChanges: await pages(`${fx.records('items')}/changes?since=${EPOCH}`),
  };
}

interface Request {
  method: string;
  path: string;
  body: unknown;
}

/** Puts `bad` among `good` at a generated position. */
function withOneInvalid<T>(good: fc.Arbitrary<T[]>, bad: fc.Arbitrary<T>): fc.Arbitrary<T[]> {
  return fc.tuple(good, bad, fc.nat()).map(([items, item, at]) => {
    const out = [...items];
    out.splice(at % (out.length + 1), 0, item);
    return out;
  });
}

const name = fc.string({ minLength: 1, maxLength: 12 });
const qty = fc.option(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }), { nil: null });
const status = fc.constantFrom('a', 'b', null);

// ---- record batches ----------------------------------------------------------------------------

const validCreate = () =>
  fc.record(
    { name, qty, status, ref: fc.constantFrom(...refIds, null), email: fc.uuid().map((u) => `${u}@example.com`) },
    { requiredKeys: ['name'] },
  );

const invalidCreate = () =>
  fc.constantFrom<Record<string, unknown>>(
    { name: 'x', nope: 1 },
    { name: 5 },
    {},
    { name: null },
    { name: 'x', status: 'zzz' },
    { name: 'x', ref: 987654321 },
    { name: 'x', email: 'taken@example.com' },
    { name: 'x', qty: 'abc' },
    { name: 'x', qty: '12' },
    { name: 'x', status: ['a'] },
  );

function recordCreate(): fc.Arbitrary<Request> {
  return withOneInvalid(fc.array(validCreate(), { minLength: 0, maxLength: 5 }), invalidCreate()).map((records) => ({
    method: 'POST', path: fx.records('items'), body: { records },
  }));
}

function recordUpdate(): fc.Arbitrary<Request> {
  const good = fc
    .shuffledSubarray(itemIds, { minLength: 0 })
    .chain((ids) =>
      fc.tuple(...ids.map((id) => fc.record({ name, qty, status }, { requiredKeys: [] }).map((v) => ({ id, ...v })))),
    )
    .map((items) => items as Record<string, unknown>[]);
  const bad = fc.oneof(
    fc.constantFrom<Record<string, unknown>>(
      { id: 987654321, name: 'x' },
      { id: 'abc', name: 'x' },
      { id: 0 },
      { name: 'no id' },
    ),
    fc.constantFrom(...itemIds).chain((id) =>
      fc.constantFrom<Record<string, unknown>>(
        { id, name: null },
        { id, name: '' },
        { id, qty: 'x' },
        { id, status: ['a', 'b'] },
        { id, nope: 1 },
      ),
    ),
    // Another record's unique value (itemIds[0] holds it, so setting it there again would be valid).
    fc.constantFrom(...itemIds.slice(1)).map((id) => ({ id, email: 'taken@example.com', name: 'y' })),
  );
  return fc
    .tuple(good, bad, fc.nat())
    .map(([items, item, at]) => {
      // An id repeated in one batch is invalid by itself: keep the bad item's id out of the rest, so
      // the item's own fault is what is tested.
      const out = items.filter((r) => r.id !== item.id);
      out.splice(at % (out.length + 1), 0, item);
      return { method: 'PATCH', path: fx.records('items'), body: { records: out } };
    });
}

function recordDelete(): fc.Arbitrary<Request> {
  const good = fc.shuffledSubarray(itemIds, { minLength: 0 }).map((ids) => ids.map((id, i) => (i % 2 ? Number(id) : id)));
  const bad = fc.oneof(
    fc.constantFrom<unknown>(987654321, '987654321', 'abc', 0, -5, 1.5, null, {}),
    fc.constant('repeat'),
  );
  return fc.tuple(good, bad, fc.nat()).map(([ids, item, at]) => {
    const out: unknown[] = [...ids];
    // `repeat`: the first id twice (or an unknown id when none was chosen).
    const bad = item === 'repeat' ? (ids.length > 0 ? String(ids[0]) : 987654321) : item;
    out.splice(at % (out.length + 1), 0, bad);
    return { method: 'DELETE', path: fx.records('items'), body: { records: out } };
  });
}

// ---- field batches -----------------------------------------------------------------------------

const fieldsPath = () => `modules/${MODULE}/tables/items/fields/batch`;

function fieldCreate(): fc.Arbitrary<Request> {
  const kind = fc.constantFrom('string', 'number', 'boolean', 'date', 'choice');
  const good = fc
    .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), { minLength: 0, maxLength: 4 })
    .chain((names) => fc.tuple(...names.map((n) => kind.map((type) => ({ n, type })))))
    .map((items) =>
      items.map(({ n, type }) => field(`new_${n}`, type as 'string', type === 'choice' ? { options: [{ name: 'p' }] } : {})),
    );
  const bad = fc.constantFrom<Record<string, unknown>>(
    field('name', 'string'),
    { ...field('new_bad', 'string'), type: 'nope' },
    field('new_bad2', 'string', { options: [{ name: 'p' }] }),
    field('new_bad3', 'reference', { refTableName: 'no_such_table' }),
    { ...field('new_bad4', 'string'), labels: { '': '' } },
    field('new_bad5', 'number', { defaultValue: 'not a number' }),
    field('new_bad6', 'string', { canRead: '(((' }),
    { name: 'new_bad7', type: 'string' },
  );
  return withOneInvalid(good as fc.Arbitrary<Record<string, unknown>[]>, bad).map((fields) => ({
    method: 'POST', path: fieldsPath(), body: fields,
  }));
}

function fieldUpdate(): fc.Arbitrary<Request> {
  const good = fc
    .shuffledSubarray([...EXTRA, 'qty'], { minLength: 0 })
    .chain((names) => fc.tuple(...names.map((n) => name.map((label) => ({ fieldName: n, labels: { '': label } })))));
  const bad = fc.constantFrom<Record<string, unknown>>(
    { fieldName: 'nope', labels: { '': 'x' } },
    { fieldName: 'name', name: 'email' },
    { fieldName: 'name', options: [{ name: 'p' }] },
    { fieldName: 'status', options: 'select refs' },
    { fieldName: 'qty', defaultValue: 'abc' },
    { fieldName: 'qty', expression: '1' },
    { fieldName: 'name', bogus: true },
  );
  return fc.tuple(good, bad, fc.nat()).map(([items, item, at]) => {
    const out: Record<string, unknown>[] = [...items];
    out.splice(at % (out.length + 1), 0, item);
    return { method: 'PATCH', path: fieldsPath(), body: out };
  });
}

function fieldDelete(): fc.Arbitrary<Request> {
  const good = fc.shuffledSubarray(EXTRA, { minLength: 0 });
  return fc.tuple(good, fc.constantFrom('nope', 'repeat', 'Bad-Name'), fc.nat()).map(([names, item, at]) => {
    const out = [...names];
    out.splice(at % (out.length + 1), 0, item === 'repeat' ? (names[0] ?? 'nope') : item);
    return { method: 'DELETE', path: fieldsPath(), body: { fieldNames: out } };
  });
}

// ---- the property ------------------------------------------------------------------------------

async function holds(request: Request): Promise<void> {
  const before = await snapshot();
  const res = await fx.api(request.method, request.path, request.body);
  expect([400, 404], `${request.method} ${JSON.stringify(request.body)} → ${res.status} ${JSON.stringify(res.body)}`).toContain(
    res.status,
  );
  expect(res.body).toEqual({ error: { message: expect.any(String) } });
  expect(await snapshot()).toEqual(before);
}

const RUNS = 50;

describe('batches with one invalid item change nothing', () => {
  for (const [title, arbitrary] of [
    ['record create', recordCreate],
    ['record update', recordUpdate],
    ['record delete', recordDelete],
    ['field batch create', fieldCreate],
    ['field batch update', fieldUpdate],
    ['field batch delete', fieldDelete],
  ] as const) {
    it(title, async () => {
      await fc.assert(fc.asyncProperty(arbitrary(), holds), { numRuns: RUNS });
    });
  }

  it('the valid part alone does apply (the generators make real changes)', async () => {
    const before = await snapshot();
    const res = await fx.api('POST', fx.records('items'), { records: [{ name: 'fine', email: 'fine@example.com' }] });
    expect(res.status).toBe(201);
    expect(await snapshot()).not.toEqual(before);
  });
});
