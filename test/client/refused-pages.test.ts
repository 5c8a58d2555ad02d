import { afterEach, describe, expect, it } from 'vitest';
import { RecordsRefusedError, WorkspaceClient, type RefusedPage } from '../../src/client/index.ts';
import { PAGES_BEFORE_GROWING } from '../../src/client/record-pager.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { WORKSPACE_ID, json, listedIds, startFakeUpstream, type Behaviour, type SeenRequest } from './fake-upstream.ts';

/**
 * Record reads when upstream refuses (400) a page as more than it answers at once, as the
 * emulator does when a request's expressions take more than its budget (test/sync/refused-pages
 * reads the emulator itself). Here a scripted upstream refuses a page whose records cost more than
 * a budget, so where a refusal falls is exact, and records can be deleted between any two requests.
 */

const KEY = 'refused-pages-test-key-0123456789';
const REFUSAL = 'the expressions of this request took more than 1000 ms together and were stopped';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Costly {
  /** The table's ids, ascending; `before` may change them before request n is answered. */
  ids: number[];
  /** What a record costs upstream to list; a request over `budget` in all is refused. */
  cost: (id: number) => number;
  budget: number;
  before?: (request: number, ids: number[], seen: SeenRequest) => void;
}

/** A records endpoint that refuses pages costing more than the budget. */
function costlyUpstream({ ids, cost, budget, before }: Costly): (seen: SeenRequest, index: number) => Behaviour {
  return (seen, index) => {
    before?.(index, ids, seen);
    const { page, offset, limit, hasMore } = listedIds(ids, seen);
    if (page.reduce((sum, id) => sum + cost(id), 0) > budget) return json(400, { error: { message: REFUSAL } });
    const data = page.map((id) => ({ id: String(id), values: { n: id } }));
    return json(200, { data, page_info: { has_more: hasMore, limit, offset } });
  };
}

async function setup(costly: Costly) {
  const fake = await startFakeUpstream(costlyUpstream(costly));
  const client = new WorkspaceClient({ baseUrl: fake.url, apiKey: KEY, workspaceId: WORKSPACE_ID, retryBaseMs: 1, retryMaxMs: 5, concurrency: 16 });
  cleanups.push(() => fake.close(), () => client.close());
  /** Each request as [offset, limit]. */
  const asked = () => fake.requests.map((r) => [Number(r.query.get('offset')), Number(r.query.get('limit'))]);
  return { fake, client, asked };
}

async function idsRead(pages: AsyncIterable<{ id: string }[]>): Promise<number[]> {
  const out: number[] = [];
  for await (const page of pages) out.push(...page.map((r) => Number(r.id)));
  return out;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const ascendingOnce = (ids: number[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

describe('iterateRecords when upstream refuses pages', () => {
  it('asks again at the refused offset with half as many records, and doubles again after a few accepted pages', async () => {
    // Records 31 to 40 cost 1 each; a page may hold 3 of them.
    const { client, asked } = await setup({ ids: range(1, 100), cost: (id) => (id > 30 && id <= 40 ? 1 : 0), budget: 3 });
    const refused: RefusedPage[] = [];
    const seen = await idsRead(client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 1, onRefusedPage: (r) => refused.push(r) }));
    expect(seen).toEqual(range(1, 100));
    // Pages of 10 new records (11 with the overlap) up to offset 30, refused there at 11, then 6, then 3 new records a page.
    expect(asked().slice(0, 6)).toEqual([[0, 11], [10, 11], [20, 11], [30, 11], [30, 6], [30, 3]]);
    expect(refused).toEqual([
      { asked: 11, next: 6, offset: 30, message: REFUSAL },
      { asked: 6, next: 3, offset: 30, message: REFUSAL },
    ]);
    // Each page starts at the last record of the page before, whatever the sizes: offsets follow the records read.
    const accepted = asked().filter(([offset, limit]) => !refused.some((r) => r.offset === offset && r.asked === limit));
    for (let i = 1; i < accepted.length; i++) expect(accepted[i]![0]).toBe(accepted[i - 1]![0]! + accepted[i - 1]![1]! - 1);
    // Grown back to the full size past the costly records.
    expect(asked().at(-1)![1]).toBe(11);
    const small = asked().findIndex(([, limit]) => limit === 3);
    expect(asked().slice(small, small + PAGES_BEFORE_GROWING).every(([, limit]) => limit === 3)).toBe(true);
  });

  it('reads a page of one new record as two requests of one record where two at once are refused', async () => {
    const { client, asked } = await setup({ ids: range(1, 9), cost: () => 1, budget: 1 });
    const seen = await idsRead(client.iterateRecords('crm', 'deals', { pageSize: 4, concurrency: 1 }));
    expect(seen).toEqual(range(1, 9));
    // The new record first, then the one before it (the overlap).
    const singles = asked().filter(([, limit]) => limit === 1);
    expect(singles.slice(0, 4)).toEqual([[1, 1], [0, 1], [2, 1], [1, 1]]);
  });

  it('hands out every record that stays, once and in order, while records are deleted below it and the page size changes', async () => {
    for (const [budget, seed] of [[1, 3], [1, 11], [3, 5], [3, 19], [8, 7]] as const) {
      let state: number = seed;
      const random = (below: number) => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % below;
      };
      const deleted = new Set<number>();
      const { client, asked } = await setup({
        ids: range(1, 400),
        // A run of costly records, then every third one up to 250.
        cost: (id) => ((id >= 50 && id <= 90) || (id <= 250 && id % 3 === 0) ? 1 : 0),
        budget,
        before: (_n, ids) => {
          if (random(3) === 0) deleted.add(ids.splice(random(ids.length), 1)[0]!);
          ids.push(ids.at(-1)! + 1);
        },
      });
      const seen = await idsRead(client.iterateRecords('crm', 'deals', { pageSize: 20, concurrency: 4 }));
      expect(ascendingOnce(seen)).toBe(true);
      const stayed = range(1, 400).filter((id) => !deleted.has(id));
      expect(stayed.filter((id) => !seen.includes(id))).toEqual([]);
      if (budget === 1) expect(asked().some(([, limit]) => limit === 1)).toBe(true);
    }
  });

  it('steps back when records deleted between the two requests of one record moved a record past the reader', async () => {
    let deletedAt: number | undefined;
    const { client } = await setup({
      ids: range(1, 12),
      cost: () => 1,
      budget: 1,
      before: (_n, ids, seen) => {
        // Right after the first single read past record 5, records 2 and 3 go: 6 and 7 move down.
        if (deletedAt === undefined && seen.query.get('limit') === '1' && seen.query.get('offset') === '5') {
          deletedAt = _n;
          ids.splice(1, 2);
        }
      },
    });
    const seen = await idsRead(client.iterateRecords('crm', 'deals', { pageSize: 2, concurrency: 1 }));
    expect(deletedAt).toBeDefined();
    expect(ascendingOnce(seen)).toBe(true);
    expect(seen.filter((id) => id > 3)).toEqual(range(4, 12));
  });

  it('fails naming the record upstream refuses even alone', async () => {
    const { client } = await setup({ ids: range(1, 9), cost: (id) => (id === 7 ? 2 : 0), budget: 1 });
    const err = await rejectionOf(idsRead(client.iterateRecords('crm', 'deals', { pageSize: 3, concurrency: 2 })));
    expect(err).toBeInstanceOf(RecordsRefusedError);
    expect(err.status).toBe(400);
    expect(err.records).toBe('the record after record 6 (offset 6)');
    expect(err.message).toMatch(/^listRecords \(GET \/api\/v1\/.*\/records\) refused the record after record 6 \(offset 6\) even alone, with HTTP 400: the expressions/);
  });

  it('names a refused first record by its offset, and a later one by the record before it even before any was handed out', async () => {
    const first = await setup({ ids: range(1, 3), cost: (id) => (id === 1 ? 2 : 0), budget: 1 });
    expect((await rejectionOf(idsRead(first.client.iterateRecords('crm', 'deals', { pageSize: 5 })))).records).toBe('the first record (offset 0)');
    const second = await setup({ ids: range(1, 3), cost: (id) => (id === 2 ? 2 : 0), budget: 1 });
    expect((await rejectionOf(idsRead(second.client.iterateRecords('crm', 'deals', { pageSize: 5 })))).records).toBe('the record after record 1 (offset 1)');
  });
});

describe('getRecordsByIds when upstream refuses a request', () => {
  it('splits the ids in halves until upstream answers, and hands the records back in id order', async () => {
    const { client, fake } = await setup({ ids: range(1, 300), cost: (id) => (id % 2 === 0 ? 1 : 0), budget: 10 });
    const refused: RefusedPage[] = [];
    const wanted = [...range(101, 160).reverse(), 5, 4];
    const records = await client.getRecordsByIds('crm', 'deals', wanted, { onRefusedPage: (r) => refused.push(r) });
    expect(records.map((r) => Number(r.id))).toEqual([4, 5, ...range(101, 160)]);
    expect(refused[0]).toEqual({ asked: 62, next: 31, message: REFUSAL });
    const filters = fake.requests.map((r) => (JSON.parse(r.query.get('filter')!) as { id: number[] }).id);
    expect(filters.every((ids) => ids.every((id) => wanted.includes(id)))).toBe(true);
  });

  it('fails naming the record upstream refuses alone', async () => {
    const { client } = await setup({ ids: range(1, 20), cost: (id) => (id === 7 ? 2 : 0), budget: 1 });
    const err = await rejectionOf(client.getRecordsByIds('crm', 'deals', range(1, 20)));
    expect(err).toBeInstanceOf(RecordsRefusedError);
    expect(err.records).toBe('record 7');
  });
});

describe('estimateRecordCount when upstream refuses its first page', () => {
  it('probes one record at a time from the start', async () => {
    for (const total of [0, 1, 7, 345]) {
      const { client } = await setup({ ids: range(1, total), cost: () => 1, budget: 1 });
      expect(await client.estimateRecordCount('crm', 'deals')).toBe(total);
    }
  });
});
