import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../src/api/index.ts';
import { UpstreamError, WorkspaceClient, type RequestInfo } from '../../src/client/index.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { rejectionOf } from '../helpers/rejection.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** Endpoint coverage and the paging rules, against the real emulator on a real port. */

let emu: RunningEmulator;
let upstream: UpstreamWorkspace;
let client: WorkspaceClient;
const requests: RequestInfo[] = [];
const M = 'crm';

beforeAll(async () => {
  emu = await startEmulator();
  upstream = new UpstreamWorkspace(emu);
  await upstream.createModule(M, { labels: { '': 'CRM' } });
  client = new WorkspaceClient({
    baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId, retryBaseMs: 1, retryMaxMs: 20, maxRetries: 10,
    onRequest: (info) => requests.push(info),
  });
});

afterAll(async () => {
  await client?.close();
  await emu?.close();
});

async function collect<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(...page);
  return out;
}

function nowTimestamp(): string {
  return new Date().toISOString();
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('workspace and tables', () => {
  it('creates, reads, lists, updates and deletes tables', async () => {
    const created = await client.createTable(M, { name: 'scratch', labels: { '': 'Scratch' }, hasHistory: true });
    expect(created.name).toBe('scratch');
    expect(created.id).not.toBe('');

    expect((await client.listTables(M)).map((t) => t.name)).toContain('scratch');
    const read = await client.getTable(M, 'scratch');
    expect(read.id).toBe(created.id);
    expect(read.hasHistory).toBe(true);

    const renamed = await client.updateTable(M, 'scratch', { name: 'scratch_two', labels: { '': 'Scratch 2' } });
    expect(renamed).toMatchObject({ id: created.id, name: 'scratch_two' });

    const workspace = await client.getWorkspace();
    const mod = workspace.modules.find((m) => m.name === M)!;
    expect(mod.tables.map((t) => t.name)).toContain('scratch_two');

    expect(await client.deleteTable(M, 'scratch_two')).toEqual({ id: created.id });
    const err = await rejectionOf(client.getTable(M, 'scratch_two'));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.code).toBe('UPSTREAM_NOT_FOUND');
    expect(err.status).toBe(404);
  });

  it('reports a duplicate table as UPSTREAM_BAD_REQUEST with the upstream message', async () => {
    await client.createTable(M, { name: 'dupe' });
    const err = await rejectionOf(client.createTable(M, { name: 'dupe' }));
    expect(err.code).toBe('UPSTREAM_BAD_REQUEST');
    expect(err.upstreamMessage).not.toBe('');
  });

  it('reports a wrong key as UPSTREAM_UNAUTHORIZED, without retrying', async () => {
    const infos: RequestInfo[] = [];
    const wrong = new WorkspaceClient({
      baseUrl: emu.url, apiKey: 'not-the-key', workspaceId: emu.workspaceId, onRequest: (i) => infos.push(i),
    });
    try {
      const err = await rejectionOf(wrong.getWorkspace());
      expect(err.code).toBe('UPSTREAM_UNAUTHORIZED');
      expect(infos).toHaveLength(1);
    } finally {
      await wrong.close();
    }
  });
});

describe('fields', () => {
  beforeAll(async () => {
    await client.createTable(M, { name: 'products' });
  });

  it('creates fields singly and in a batch, and reads them', async () => {
    const name = await client.createField(M, 'products', { name: 'title', type: 'string', labels: { '': 'Title' } });
    expect(name).toMatchObject({ name: 'title', type: 'string' });
    const batch = await client.createFields(M, 'products', [
      { name: 'price', type: 'number', labels: { '': 'Price' } },
      { name: 'stage', type: 'choice', labels: { '': 'Stage' }, options: [{ name: 'new' }, { name: 'sold' }] },
      { name: 'notes', type: 'string', labels: { '': 'Notes' } },
      { name: 'extra', type: 'string', labels: { '': 'Extra' } },
    ]);
    expect(batch.map((f) => f.name)).toEqual(['price', 'stage', 'notes', 'extra']);

    const stage = await client.getField(M, 'products', 'stage');
    expect(Array.isArray(stage.options)).toBe(true);
    expect((stage.options as Array<{ id: string; name: string }>).map((o) => o.name)).toEqual(['new', 'sold']);
    expect((stage.options as Array<{ id: string }>).every((o) => o.id !== '')).toBe(true);
  });

  it('pages the fields list with limit and offset', async () => {
    const first = await client.listFields(M, 'products', { limit: 2, offset: 0 });
    expect(first.data).toHaveLength(2);
    expect(first.page_info).toMatchObject({ has_more: true, limit: 2, offset: 0 });
    const all = await client.listFields(M, 'products', { limit: 100 });
    expect(all.data.map((f) => f.name)).toEqual(expect.arrayContaining(['title', 'price', 'stage', 'notes', 'extra']));
  });

  it('updates fields singly and in a batch', async () => {
    const one = await client.updateField(M, 'products', 'title', { labels: { '': 'Product title' }, required: true });
    expect(one.labels).toEqual({ '': 'Product title' });
    const many = await client.updateFields(M, 'products', [
      { fieldName: 'price', labels: { '': 'Unit price' } },
      { fieldName: 'notes', name: 'remarks' },
    ]);
    expect(many.map((f) => f.name)).toEqual(['price', 'remarks']);
    expect((await client.getField(M, 'products', 'remarks')).name).toBe('remarks');
  });

  it('deletes fields singly and in a batch', async () => {
    await client.createFields(M, 'products', [
      { name: 'gone_a', type: 'string', labels: { '': 'A' } },
      { name: 'gone_b', type: 'string', labels: { '': 'B' } },
    ]);
    expect((await client.deleteField(M, 'products', 'extra')).name).toBe('extra');
    expect((await client.deleteFields(M, 'products', ['gone_a', 'gone_b'])).map((f) => f.name).sort()).toEqual(['gone_a', 'gone_b']);
    const err = await rejectionOf(client.getField(M, 'products', 'gone_a'));
    expect(err.code).toBe('UPSTREAM_NOT_FOUND');
  });
});

describe('records', () => {
  beforeAll(async () => {
    await client.createTable(M, { name: 'deals', hasHistory: true });
    await client.createFields(M, 'deals', [
      { name: 'title', type: 'string', labels: { '': 'Title' } },
      { name: 'amount', type: 'number', labels: { '': 'Amount' } },
    ]);
  });

  it('creates, lists, filters, sorts, updates and deletes records', async () => {
    const { ids } = await client.createRecords(M, 'deals', [
      { title: 'b', amount: 2 }, { title: 'a', amount: 1 }, { title: 'c', amount: 3 },
    ]);
    expect(ids).toHaveLength(3);

    const sorted = await client.listRecords(M, 'deals', { sort: '-amount', filter: { id: ids }, fields: ['amount'] });
    expect(sorted.data.map((r) => r.values.amount)).toEqual([3, 2, 1]);
    expect(sorted.data.every((r) => !('title' in r.values))).toBe(true);

    const filtered = await client.listRecords(M, 'deals', { filter: { title: ['a', 'c'] }, sort: 'title' });
    expect(filtered.data.map((r) => r.values.title)).toEqual(['a', 'c']);

    expect(await client.updateRecords(M, 'deals', [{ id: ids[0]!, amount: 20 }])).toEqual({ updatedIds: [ids[0]] });
    expect((await client.getRecordsByIds(M, 'deals', [ids[0]!]))[0]!.values.amount).toBe(20);

    expect(await client.deleteRecords(M, 'deals', [ids[1]!, Number(ids[2])])).toEqual({ deletedIds: [ids[1], ids[2]] });
    expect(await client.getRecordsByIds(M, 'deals', [ids[1]!, ids[2]!])).toEqual([]);
  });

  it('reports an update of a missing record as UPSTREAM_NOT_FOUND', async () => {
    const err = await rejectionOf(client.updateRecords(M, 'deals', [{ id: 987654321, amount: 1 }]));
    expect(err.code).toBe('UPSTREAM_NOT_FOUND');
  });

  it('iterateRecords reads a large table in id order, every record once', async () => {
    await client.createTable(M, { name: 'bulk' });
    await client.createField(M, 'bulk', { name: 'n', type: 'number', labels: { '': 'N' } });
    const ids: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const records = Array.from({ length: 50 }, (_, i) => ({ n: batch * 50 + i }));
      ids.push(...(await client.createRecords(M, 'bulk', records)).ids);
    }
    const seen = await collect(client.iterateRecords(M, 'bulk', { pageSize: 30, concurrency: 4 }));
    expect(seen.map((r) => r.id)).toEqual([...ids].sort((a, b) => Number(a) - Number(b)));
    expect(new Set(seen.map((r) => r.values.n)).size).toBe(250);
  });

  it('getRecordsByIds reads more than 100 ids and leaves out missing ones', async () => {
    const all = await collect(client.iterateRecords(M, 'bulk'));
    const wanted = all.slice(0, 180).map((r) => r.id);
    await client.deleteRecords(M, 'bulk', [wanted[5]!]);
    const got = await client.getRecordsByIds(M, 'bulk', [...wanted, '99999999'], { fields: ['n'] });
    expect(got).toHaveLength(179);
    expect(got.map((r) => r.id)).not.toContain(wanted[5]);
  });
});

describe('change polls', () => {
  it('record changes: pages are pinned to the first asOf; the next poll picks up the rest', async () => {
    await client.createTable(M, { name: 'events', hasHistory: true });
    await client.createField(M, 'events', { name: 'n', type: 'number', labels: { '': 'N' } });
    const since = nowTimestamp();
    await pause(5);
    const { ids } = await client.createRecords(M, 'events', Array.from({ length: 7 }, (_, n) => ({ n })));
    await pause(5);

    const poll = client.pollRecordChanges(M, 'events', { since, pageSize: 3 });
    const seen: string[] = [];
    let pages = 0;
    for await (const page of poll) {
      seen.push(...page.map((c) => c.id));
      pages++;
      if (pages === 1) {
        // Written after the poll's asOf: must not appear in this poll.
        await pause(5);
        await client.createRecords(M, 'events', [{ n: 100 }, { n: 101 }]);
      }
    }
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(parseTimestamp(poll.asOf!)).toBeDefined();

    const next = client.pollRecordChanges(M, 'events', { since: poll.asOf! });
    const later = await collect(next);
    expect(later.map((c) => c.changeType)).toEqual(['create', 'create']);
  });

  it('record changes report updates and deletes', async () => {
    const { ids } = await client.createRecords(M, 'events', [{ n: 1 }]);
    await pause(5);
    const since = nowTimestamp();
    await pause(5);
    await client.updateRecords(M, 'events', [{ id: ids[0]!, n: 2 }]);
    await client.deleteRecords(M, 'events', [ids[0]!]);
    const changes = await collect(client.pollRecordChanges(M, 'events', { since }));
    expect(changes.every((c) => c.id === ids[0])).toBe(true);
    expect(changes.map((c) => c.changeType)).toContain('delete');
  });

  it('record changes of a table without history fail with UPSTREAM_BAD_REQUEST', async () => {
    const err = await rejectionOf(collect(client.pollRecordChanges(M, 'bulk', { since: nowTimestamp() })));
    expect(err.code).toBe('UPSTREAM_BAD_REQUEST');
  });

  it('schema changes name created tables and fields by id, paged', async () => {
    const since = nowTimestamp();
    await pause(5);
    const table = await client.createTable(M, { name: 'audit', hasHistory: true });
    const fields = await client.createFields(M, 'audit', [
      { name: 'who', type: 'string', labels: { '': 'Who' } },
      { name: 'what', type: 'string', labels: { '': 'What' } },
      { name: 'when_at', type: 'timestamp', labels: { '': 'When' } },
    ]);
    const poll = client.pollSchemaChanges({ since, pageSize: 2 });
    const changes = await collect(poll);
    expect(poll.asOf).toBeDefined();
    expect(changes).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: table.id, kind: 'Table', action: 'upserted' }),
      ...fields.map((f) => expect.objectContaining({ id: f.id, kind: 'Field', action: 'upserted' })),
    ]));

    const since2 = poll.asOf!;
    await pause(5);
    await client.deleteField(M, 'audit', 'what');
    const deleted = await collect(client.pollSchemaChanges({ since: since2 }));
    expect(deleted).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: fields[1]!.id, kind: 'Field', action: 'deleted' }),
    ]));
  });
});

describe('faults', () => {
  it('reads through injected 500s, 429s and dropped connections', async () => {
    const expected = (await collect(client.iterateRecords(M, 'bulk'))).map((r) => r.id);
    expect(expected.length).toBeGreaterThan(100);
    await upstream.setFaults({ errorRate: 0.2, rateLimitRate: 0.2, retryAfterSeconds: 0, dropRate: 0.2, seed: 7 });
    try {
      const before = requests.length;
      const seen = await collect(client.iterateRecords(M, 'bulk', { pageSize: 25, concurrency: 3 }));
      expect(seen.map((r) => r.id)).toEqual(expected);
      const attempts = requests.slice(before);
      expect(attempts.some((i) => i.status === 'network')).toBe(true);
      expect(attempts.some((i) => i.status === 429)).toBe(true);
      expect(attempts.some((i) => i.status === 500)).toBe(true);
    } finally {
      await upstream.clearFaults();
    }
  });
});
