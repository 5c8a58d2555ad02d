import { afterEach, describe, expect, it } from 'vitest';
import { InvalidResponseError, WorkspaceClient } from '../../src/client/index.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { WORKSPACE_ID, json, listedIds, startFakeUpstream, type Behaviour, type SeenRequest } from './fake-upstream.ts';

const KEY = 'paging-test-key-0123456789';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(pick: (seen: SeenRequest, index: number) => Behaviour) {
  const fake = await startFakeUpstream(pick);
  const client = new WorkspaceClient({
    baseUrl: fake.url, apiKey: KEY, workspaceId: WORKSPACE_ID, retryBaseMs: 1, retryMaxMs: 5, concurrency: 16,
  });
  cleanups.push(() => fake.close(), () => client.close());
  return { fake, client };
}

async function collect<T>(pages: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const page of pages) out.push(page);
  return out;
}

// ---- change polls --------------------------------------------------------------------------

const T0 = '2026-03-01T10:00:00.000Z';
const ASOF = '2026-03-01T12:00:00.000Z';

/** A changes endpoint with `total` changes that answers short pages (at most 3 items) and a later asOf on later pages. */
function changesUpstream(total: number, item: (n: number) => object): (seen: SeenRequest) => Behaviour {
  return (seen) => {
    const offset = Number(seen.query.get('offset') ?? 0);
    const limit = Number(seen.query.get('limit') ?? 100);
    const count = Math.max(0, Math.min(limit, 3, total - offset));
    const data = Array.from({ length: count }, (_, i) => item(offset + i));
    // A poll must ignore the asOf of later pages: this one moves.
    const asOf = seen.query.has('asOf') ? '2026-03-01T13:00:00.000Z' : ASOF;
    return json(200, { data, meta: { asOf }, page_info: { has_more: offset + count < total, limit, offset } });
  };
}

describe('change polls', () => {
  it('pages one schema poll by the spec: no asOf first, then the first asOf, offset by items received', async () => {
    const { fake, client } = await setup(changesUpstream(7, (n) => ({ id: `o${n}`, kind: 'Table', action: 'upserted', changedAt: T0 })));
    const poll = client.pollSchemaChanges({ since: T0, pageSize: 5 });
    expect(poll.asOf).toBeUndefined();
    const pages = await collect(poll);
    expect(pages.map((p) => p.map((c) => c.id))).toEqual([['o0', 'o1', 'o2'], ['o3', 'o4', 'o5'], ['o6']]);
    expect(poll.asOf).toBe(ASOF);
    expect(poll.done).toBe(true);
    expect(fake.requests.map((r) => Object.fromEntries(r.query))).toEqual([
      { since: T0, limit: '5', offset: '0' },
      { since: T0, asOf: ASOF, limit: '5', offset: '3' },
      { since: T0, asOf: ASOF, limit: '5', offset: '6' },
    ]);
    expect(fake.requests[0]!.path).toBe(`/api/v1/workspace/${WORKSPACE_ID}/schema/changes`);
  });

  it('pages record changes the same way', async () => {
    const { fake, client } = await setup(changesUpstream(4, (n) => ({ id: String(n + 1), changeType: 'update', changedAt: T0 })));
    const poll = client.pollRecordChanges('crm', 'deals', { since: T0 });
    const pages = await collect(poll);
    expect(pages.flat().map((c) => c.id)).toEqual(['1', '2', '3', '4']);
    expect(poll.asOf).toBe(ASOF);
    expect(fake.requests.map((r) => r.query.get('asOf'))).toEqual([null, ASOF]);
    expect(fake.requests.map((r) => r.query.get('offset'))).toEqual(['0', '3']);
    expect(fake.requests[0]!.path).toBe(`/api/v1/workspace/${WORKSPACE_ID}/modules/crm/tables/deals/records/changes`);
  });

  it('reads unknown record change types as update', async () => {
    const types = ['create', 'restore', 'delete', 'update'];
    const { client } = await setup(changesUpstream(4, (n) => ({ id: String(n + 1), changeType: types[n], changedAt: T0 })));
    const changes = (await collect(client.pollRecordChanges('crm', 'deals', { since: T0 }))).flat();
    expect(changes.map((c) => c.changeType)).toEqual(['create', 'update', 'delete', 'update']);
  });

  it('hands out an empty first page, so the caller still learns asOf', async () => {
    const { client } = await setup(changesUpstream(0, () => ({})));
    const poll = client.pollSchemaChanges({ since: T0 });
    expect(await collect(poll)).toEqual([[]]);
    expect(poll.asOf).toBe(ASOF);
  });

  it('stops after has_more is false even if the caller keeps asking', async () => {
    const { fake, client } = await setup(changesUpstream(2, (n) => ({ id: `o${n}`, kind: 'Field', action: 'deleted', changedAt: T0 })));
    const iterator = client.pollSchemaChanges({ since: T0 })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toHaveLength(2);
    expect((await iterator.next()).done).toBe(true);
    expect((await iterator.next()).done).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('does not fetch ahead: one page in hand at a time', async () => {
    const { fake, client } = await setup(changesUpstream(9, (n) => ({ id: `o${n}`, kind: 'Table', action: 'upserted', changedAt: T0 })));
    const iterator = client.pollSchemaChanges({ since: T0 })[Symbol.asyncIterator]();
    await iterator.next();
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.requests).toHaveLength(1);
    await iterator.return?.();
  });

  it('fails on an empty page that claims has_more (it would loop forever)', async () => {
    const { client } = await setup(() => json(200, { data: [], meta: { asOf: ASOF }, page_info: { has_more: true, limit: 100, offset: 0 } }));
    const err = await rejectionOf(collect(client.pollSchemaChanges({ since: T0 })));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('paging');
  });

  it('refuses a meta.asOf that runs ahead of the same feed\'s last one by more than the time passed here (plus a minute)', async () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const since = at(Date.now() - 60_000);
    let asOf = at(Date.now());
    const { client } = await setup(() => json(200, { data: [], meta: { asOf }, page_info: { has_more: false, limit: 100, offset: 0 } }));
    expect((await client.listRecordChanges('crm', 'deals', { since })).meta.asOf).toBe(asOf);
    // Four minutes later at once: within the skew allowed against this clock, but not a clock.
    const first = asOf;
    asOf = at(Date.parse(first) + 4 * 60_000);
    const err = await rejectionOf(client.listRecordChanges('crm', 'deals', { since }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('clock');
    expect(err.message).toContain(`meta.asOf ${asOf} is 240 s after this feed's last (${first})`);
    // Another feed has no past here; the same feed goes on once the answer is plausible again.
    expect((await client.listRecordChanges('crm', 'notes', { since })).meta.asOf).toBe(asOf);
    asOf = at(Date.parse(first) + 30_000);
    expect((await client.listRecordChanges('crm', 'deals', { since })).meta.asOf).toBe(asOf);
  });

  it('fails on a page that answers another offset than asked, or repeats the page before (an upstream ignoring offset would loop forever)', async () => {
    const page = (offset: number) => json(200, {
      data: [{ id: '7', changeType: 'update', changedAt: T0 }], meta: { asOf: ASOF }, page_info: { has_more: true, limit: 100, offset },
    });
    // The same page again and again, its offset echoed as asked.
    const echo = await setup((seen) => page(Number(seen.query.get('offset') ?? 0)));
    const repeated = await rejectionOf(collect(echo.client.pollRecordChanges('crm', 'deals', { since: T0 })));
    expect(repeated).toBeInstanceOf(InvalidResponseError);
    expect(repeated.message).toMatch(/page at offset 1 repeats the page at offset 0/);
    expect(echo.fake.requests).toHaveLength(2);
    // The same page, saying offset 0 whatever was asked.
    const stuck = await setup(() => page(0));
    const wrong = await rejectionOf(collect(stuck.client.pollRecordChanges('crm', 'deals', { since: T0 })));
    expect(wrong.message).toMatch(/asked for offset 1, the page says offset 0/);
  });

  it('fails on a page without meta.asOf', async () => {
    const { client } = await setup(() => json(200, { data: [], page_info: { has_more: false, limit: 100, offset: 0 } }));
    const err = await rejectionOf(collect(client.pollRecordChanges('crm', 'deals', { since: T0 })));
    expect(err.reason).toBe('schema');
    expect(err.message).toContain('response.meta');
  });

  it('refuses a meta.asOf before the since it answers, or more than 5 minutes ahead of this clock', async () => {
    const answer = (asOf: string) => json(200, { data: [], meta: { asOf }, page_info: { has_more: false, limit: 100, offset: 0 } });
    const at = (ms: number) => new Date(ms).toISOString();
    const since = at(Date.now() - 60_000);
    for (const good of [since, at(Date.now() + 4 * 60_000)]) {
      const { client } = await setup(() => answer(good));
      expect((await client.listRecordChanges('crm', 'deals', { since })).meta.asOf).toBe(good);
    }
    for (const bad of [at(Date.parse(since) - 1), at(Date.now() + 6 * 60_000), '2999-01-01T00:00:00.000Z']) {
      const { client } = await setup(() => answer(bad));
      for (const attempt of [
        () => client.listRecordChanges('crm', 'deals', { since }),
        () => collect(client.pollRecordChanges('crm', 'deals', { since })),
        () => collect(client.pollSchemaChanges({ since })),
      ]) {
        const err = await rejectionOf(attempt());
        expect(err).toBeInstanceOf(InvalidResponseError);
        expect(err.reason).toBe('clock');
        expect(err.message).toContain(`meta.asOf ${bad} is`);
      }
    }
  });

  it('is iterated only once', async () => {
    const { client } = await setup(changesUpstream(0, () => ({})));
    const poll = client.pollSchemaChanges({ since: T0 });
    await collect(poll);
    await expect(collect(poll)).rejects.toThrow('only once');
  });

  it('rejects a page size over 100', async () => {
    const { client } = await setup(changesUpstream(0, () => ({})));
    expect(() => client.pollSchemaChanges({ since: T0, pageSize: 101 })).toThrow(RangeError);
  });
});

// ---- record paging -------------------------------------------------------------------------

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * A records endpoint over a table that may change under the reader: `before(n, ids)` edits the
 * ids (kept sorted) before request n is answered. Later offsets answer faster, so responses
 * arrive out of order.
 */
function tableUpstream(
  ids: number[], before: (request: number, ids: number[]) => void = () => {},
): (seen: SeenRequest, index: number) => Behaviour {
  return (seen, index) => {
    before(index, ids);
    const { page, offset, limit, hasMore } = listedIds(ids, seen);
    const data = page.map((id) => ({ id: String(id), values: { n: id } }));
    const delay = Math.max(0, 60 - offset / 2);
    return json(200, { data, page_info: { has_more: hasMore, limit, offset } }, {}, delay);
  };
}

/** A records endpoint over ids 1..total. */
function recordsUpstream(total: number): (seen: SeenRequest, index: number) => Behaviour {
  return tableUpstream(range(1, total));
}

describe('iterateRecords', () => {
  it('yields every record once, pages strictly in order, sorted by id', async () => {
    const { fake, client } = await setup(recordsUpstream(95));
    const pages = await collect(client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 4 }));
    // Pages overlap by one record (limit 11, offsets 10 apart); the overlap is not handed out twice.
    expect(pages.map((p) => p.length)).toEqual([11, 10, 10, 10, 10, 10, 10, 10, 10, 4]);
    expect(pages.flat().map((r) => Number(r.id))).toEqual(range(1, 95));
    expect(fake.requests.every((r) => r.query.get('sort') === 'id' && r.query.get('limit') === '11')).toBe(true);
    const offsets = new Set(fake.requests.map((r) => Number(r.query.get('offset'))));
    expect(range(0, 9).map((n) => n * 10).filter((o) => !offsets.has(o))).toEqual([]);
    expect([...offsets].every((o) => o % 10 === 0)).toBe(true);
    // Pages were fetched concurrently.
    expect(fake.maxInFlight).toBeGreaterThan(1);
    expect(fake.maxInFlight).toBeLessThanOrEqual(4);
  });

  it('keeps at most `concurrency` pages buffered when the consumer is slow', async () => {
    const { fake, client } = await setup(recordsUpstream(1000));
    const iterator = client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 3 });
    await iterator.next();
    await new Promise((r) => setTimeout(r, 300));
    // The page handed out plus a window of 3.
    expect(fake.requests.length).toBeLessThanOrEqual(4);
    await iterator.next();
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests.length).toBeLessThanOrEqual(5);
    await iterator.return();
  });

  it('keeps fewer pages in flight when they are large: about `bytesInFlight` of answers, one page at least', async () => {
    // Pages of 11 records of 100 KB: about 1.1 MB each.
    const big = 'x'.repeat(100_000);
    const { fake, client } = await setup((seen) => {
      const offset = Number(seen.query.get('offset') ?? 0);
      const limit = Number(seen.query.get('limit') ?? 100);
      const data = range(offset + 1, offset + limit).map((id) => ({ id: String(id), values: { n: big } }));
      return json(200, { data, page_info: { has_more: true, limit, offset } });
    });
    const iterator = client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 4, bytesInFlight: 2 * 1024 * 1024 });
    await iterator.next();
    await new Promise((r) => setTimeout(r, 300));
    // The page handed out plus one in flight: a second would take the answers past 2 MiB.
    expect(fake.requests.length).toBe(2);
    await iterator.next();
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.requests.length).toBe(3);
    await iterator.return();
  });

  it('asks once for a table that fits in a page', async () => {
    const { fake, client } = await setup(recordsUpstream(7));
    const pages = await collect(client.iterateRecords('crm', 'deals', { concurrency: 8 }));
    expect(pages.flat()).toHaveLength(7);
    expect(fake.requests).toHaveLength(1);
  });

  it('yields nothing for an empty table', async () => {
    const { client } = await setup(recordsUpstream(0));
    expect(await collect(client.iterateRecords('crm', 'deals'))).toEqual([]);
  });

  it('passes fields and filter through, always sorting by id', async () => {
    const { fake, client } = await setup(recordsUpstream(0));
    await collect(client.iterateRecords('crm', 'deals', { fields: ['a', 'b'], filter: { stage: 'won' } }));
    expect(Object.fromEntries(fake.requests[0]!.query)).toEqual({
      fields: 'a,b', filter: '{"stage":"won"}', sort: 'id', limit: '100', offset: '0',
    });
  });

  it('fails on a short page that claims has_more (fixed-stride offsets would skip records)', async () => {
    const { client } = await setup(() => json(200, {
      data: [{ id: '1', values: {} }], page_info: { has_more: true, limit: 10, offset: 0 },
    }));
    const err = await rejectionOf(collect(client.iterateRecords('crm', 'deals', { pageSize: 10 })));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('paging');
  });
});

describe('iterateRecords while the table changes', () => {
  const idsOf = (pages: { id: string }[][]) => pages.flat().map((r) => Number(r.id));
  const ascendingOnce = (ids: number[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

  it('steps back when deletions below its offset moved records past it: none is skipped', async () => {
    const { client } = await setup(tableUpstream(range(1, 200), (n, ids) => {
      if (n === 3) ids.splice(0, 25);
    }));
    const seen = idsOf(await collect(client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 1 })));
    expect(ascendingOnce(seen)).toBe(true);
    expect(seen.filter((id) => id > 25)).toEqual(range(26, 200));
  });

  it('hands a record out once when insertions below its offset moved it back into a later page', async () => {
    const original = range(1, 100).map((n) => n * 10);
    const { client } = await setup(tableUpstream([...original], (n, ids) => {
      if (n === 3) ids.splice(1, 0, ...range(11, 19));
    }));
    const seen = idsOf(await collect(client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 1 })));
    expect(ascendingOnce(seen)).toBe(true);
    expect(seen.filter((id) => id % 10 === 0)).toEqual(original);
  });

  it('hands out every record that stays, once and in order, while records come and go concurrently', async () => {
    let state = 7;
    const random = (below: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % below;
    };
    const deleted = new Set<number>();
    const { client } = await setup(tableUpstream(range(1, 1500), (_n, ids) => {
      for (let i = 0; i < 3; i++) deleted.add(ids.splice(random(ids.length), 1)[0]!);
      ids.push(ids.at(-1)! + 1, ids.at(-1)! + 2);
    }));
    const seen = idsOf(await collect(client.iterateRecords('crm', 'deals', { pageSize: 10, concurrency: 4 })));
    expect(ascendingOnce(seen)).toBe(true);
    const stayed = range(1, 1500).filter((id) => !deleted.has(id));
    expect(stayed.filter((id) => !seen.includes(id))).toEqual([]);
  });

  it('fails, instead of reading forever, when pages stop bringing records it has not seen', async () => {
    const page = range(1, 11).map((id) => ({ id: String(id), values: {} }));
    const { fake, client } = await setup(() => json(200, { data: page, page_info: { has_more: true, limit: 11, offset: 0 } }));
    const err = await rejectionOf(collect(client.iterateRecords('crm', 'deals', { pageSize: 10 })));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.reason).toBe('paging');
    expect(err.message).toContain('brought no record not read before');
    expect(fake.requests.length).toBeLessThan(1100);
  }, 60_000);

  it('fails on a page whose ids are not in ascending order', async () => {
    const { client } = await setup(() => json(200, {
      data: [{ id: '2', values: {} }, { id: '1', values: {} }], page_info: { has_more: false, limit: 100, offset: 0 },
    }));
    const err = await rejectionOf(collect(client.iterateRecords('crm', 'deals')));
    expect(err.reason).toBe('paging');
    expect(err.message).toContain('record 1 follows record 2');
  });
});

describe('getRecordsByIds', () => {
  it('reads ids back in chunks of at most 100 through the id filter', async () => {
    const { fake, client } = await setup(recordsUpstream(500));
    const ids = [...Array.from({ length: 240 }, (_, i) => i * 2 + 1), 3, '5', 999_999];
    const records = await client.getRecordsByIds('crm', 'deals', ids, { fields: ['n'] });
    expect(records.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 240 }, (_, i) => i * 2 + 1).filter((id) => id <= 500),
    );
    const filters = fake.requests.map((r) => (JSON.parse(r.query.get('filter')!) as { id: number[] }).id);
    expect(filters.map((f) => f.length)).toEqual([100, 100, 41]);
    expect(new Set(filters.flat()).size).toBe(241);
    expect(fake.requests.every((r) => r.query.get('limit') === String(JSON.parse(r.query.get('filter')!).id.length))).toBe(true);
    expect(fake.requests.every((r) => r.query.get('fields') === 'n')).toBe(true);
  });

  it('refuses records without one of the expected fields, inherited names included (missing is not null)', async () => {
    const { client } = await setup(recordsUpstream(3));
    expect(await client.getRecordsByIds('crm', 'deals', [1, 2], { expectFields: ['n'] })).toHaveLength(2);
    for (const expectFields of [['n', 'gone'], ['n', 'constructor'], ['__proto__']]) {
      for (const read of [
        () => client.getRecordsByIds('crm', 'deals', [1, 2], { expectFields }),
        () => collect(client.iterateRecords('crm', 'deals', { expectFields })),
      ]) {
        const err = await rejectionOf(read());
        expect(err).toBeInstanceOf(InvalidResponseError);
        expect(err.message).toContain(`record 1 has no value for field ${JSON.stringify(expectFields.at(-1))}`);
      }
    }
  });

  it('refuses an answer holding a record it did not ask for, or one twice (a wrong answer would read as the ids asked for being gone)', async () => {
    for (const answer of [[1, 7], [1, 1]]) {
      const { client } = await setup(() => json(200, {
        data: answer.map((id) => ({ id: String(id), values: { n: id } })), page_info: { has_more: false, limit: 2, offset: 0 },
      }));
      const err = await rejectionOf(client.getRecordsByIds('crm', 'deals', [1, 2]));
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(err.message).toMatch(answer[1] === 7 ? /record 7, which was not asked for/ : /record 1 twice/);
    }
  });

  it('makes no request for no ids', async () => {
    const { fake, client } = await setup(recordsUpstream(5));
    expect(await client.getRecordsByIds('crm', 'deals', [])).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses an id that is not a positive integer', async () => {
    const { client } = await setup(recordsUpstream(5));
    await expect(client.getRecordsByIds('crm', 'deals', ['12abc'])).rejects.toThrow(RangeError);
  });
});
