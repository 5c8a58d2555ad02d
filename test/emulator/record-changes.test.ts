import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../helpers/emulator.ts';
import { field } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

let fx: RecordsFixture;
const EPOCH = '2000-01-01T00:00:00Z';
let tableNo = 0;

beforeAll(async () => {
  fx = await startRecordsFixture();
});
afterAll(() => fx.emu.close());

let table: string;
beforeEach(async () => {
  table = `hist${++tableNo}`;
  await fx.ws.createTable(MODULE, table, { hasHistory: true }, [field('name', 'string')]);
});

function admin(method: string, path: string, body?: unknown) {
  return call(fx.emu.url, method, path, { token: fx.emu.adminToken, ...(body === undefined ? {} : { body }) });
}

async function changes(query: Record<string, string>, name = table) {
  return fx.api('GET', `${fx.records(name)}/changes?${new URLSearchParams(query)}`);
}

async function poll(since: string, name = table) {
  const res = await changes({ since }, name);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('record changes', () => {
  // Statuses of the history, since and asOf rules and the unknown table: record-changes.* of the
  // conformance suite. What is the emulator's own: the message, and 400 for a limit over 100.
  it('says the table has no history, and refuses limit=101', async () => {
    await fx.ws.createTable(MODULE, `plain${tableNo}`);
    const plain = await changes({ since: EPOCH }, `plain${tableNo}`);
    expect(plain.body.error.message).toContain('has no history');
    expect((await changes({ since: EPOCH, limit: '101' })).status).toBe(400);
  });

  it('refuses an asOf later than the present, as schema changes do, and takes back one handed out', async () => {
    const res = await changes({ since: EPOCH, asOf: '9999-01-01T00:00:00Z' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^query\.asOf: 9999-01-01T00:00:00\.000Z is after the emulator's present time \(/);
    const asOf = (await poll(EPOCH)).meta.asOf;
    expect((await changes({ since: EPOCH, asOf })).status).toBe(200);
  });

  // One entry per change, in time order, their forms and the default page size:
  // record-changes.entries of the conformance suite.

  // Failed requests log nothing: record-changes.failed-requests-log-nothing of the conformance
  // suite. What is the emulator's own: a repeated id is refused (400) and logs nothing either, and
  // writes made before history was switched on are not logged.
  it('a repeated id logs nothing; tables without history log nothing', async () => {
    const [a] = await fx.ws.createRecords(MODULE, table, [{ name: 'a' }]);
    const before = (await poll(EPOCH)).data;
    expect((await fx.api('PATCH', fx.records(table), { records: [{ id: a, name: 'x' }, { id: a, name: 'y' }] })).status).toBe(400);
    expect((await poll(EPOCH)).data).toEqual(before);

    const plain = `plain${tableNo}`;
    await fx.ws.createTable(MODULE, plain, {}, [field('name', 'string')]);
    await fx.ws.createRecords(MODULE, plain, [{ name: 'before history' }]);
    await fx.ws.patchTable(MODULE, plain, { hasHistory: true });
    expect((await poll(EPOCH, plain)).data).toEqual([]);
    const [later] = await fx.ws.createRecords(MODULE, plain, [{ name: 'after' }]);
    expect((await poll(EPOCH, plain)).data.map((c: any) => c.id)).toEqual([later]);
  });

  it('since is inclusive and filters by time', async () => {
    await admin('PUT', '/_emulator/clock', { now: '2030-01-01T00:00:00Z', frozen: true });
    try {
      const [a] = await fx.ws.createRecords(MODULE, table, [{ name: 'a' }]);
      await admin('PUT', '/_emulator/clock', { now: '2030-01-02T00:00:00Z' });
      const [b] = await fx.ws.createRecords(MODULE, table, [{ name: 'b' }]);
      expect((await poll('2030-01-01T00:00:00Z')).data.map((c: any) => c.id)).toEqual([a, b]);
      const onlyB = await poll('2030-01-02T00:00:00Z');
      expect(onlyB.data).toEqual([{ id: b, changeType: 'create', changedAt: '2030-01-02T00:00:00.000Z' }]);
      expect((await poll('2030-01-01T00:00:00.001Z')).data.map((c: any) => c.id)).toEqual([b]);
    } finally {
      await admin('DELETE', '/_emulator/clock');
    }
  });

  it('pages of one poll are bounded by the first asOf: a change between pages shifts nothing and shows in the next poll', async () => {
    // A frozen clock is the hard case: without the asOf discipline every change would share one time.
    await admin('PUT', '/_emulator/clock', { now: '2031-06-01T00:00:00Z', frozen: true });
    try {
      const ids = await fx.ws.createRecords(MODULE, table, [1, 2, 3, 4, 5].map((n) => ({ name: `r${n}` })), 1);
      const first = await changes({ since: EPOCH, limit: '2' });
      expect(first.body.page_info).toEqual({ has_more: true, limit: 2, offset: 0 });
      const asOf: string = first.body.meta.asOf;

      // Changes between the pages: an update of a record already seen and a new record.
      await fx.ws.updateRecords(MODULE, table, [{ id: ids[0], name: 'changed' }]);
      const [extra] = await fx.ws.createRecords(MODULE, table, [{ name: 'extra' }]);

      const second = await changes({ since: EPOCH, asOf, limit: '2', offset: '2' });
      const third = await changes({ since: EPOCH, asOf, limit: '2', offset: '4' });
      expect(second.body.meta.asOf).toBe(asOf);
      expect(third.body.page_info).toEqual({ has_more: false, limit: 2, offset: 4 });
      const seen = [...first.body.data, ...second.body.data, ...third.body.data].map((c: any) => c.id);
      expect(seen).toEqual(ids);

      const next = await poll(asOf);
      const after = next.data.filter((c: any) => Date.parse(c.changedAt) > Date.parse(asOf));
      expect(after.map((c: any) => [c.id, c.changeType])).toEqual([[ids[0], 'update'], [extra, 'create']]);
    } finally {
      await admin('DELETE', '/_emulator/clock');
    }
  });
});
