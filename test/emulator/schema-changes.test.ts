import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/api/index.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, field, fieldsPath, makeModule, makeTable, ok, tablePath, tablesPath } from '../helpers/schema.ts';

const MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const T0 = '2026-03-01T10:00:00.000Z';

describe('schema changes', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  let admin: ReturnType<typeof adminOf>;
  const changes = (query: string) => api('GET', `schema/changes?${query}`);

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    admin = adminOf(emu);
  });
  beforeEach(async () => {
    ok(await admin('POST', 'reset'));
  });
  afterAll(() => emu.close());

  // Which since, asOf, limit and offset are accepted, and the 400s (with the parameter named) for the
  // others: schema-changes.query-accepted and schema-changes.query-400 of the conformance suite.

  it('reports every kind of schema object and action, timestamps with milliseconds', async () => {
    ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
    const mod = await makeModule(emu, 'crm');
    const table = await makeTable(emu, 'crm', 'people', {}, [field('name', 'string')]);
    const fieldId = (await api('GET', tablePath('crm', 'people'))).body.data.fields[0].id;
    await api('PATCH', tablePath('crm', 'people'), { isHidden: true });
    await api('PATCH', `${fieldsPath('crm', 'people')}/name`, { required: true });
    await api('DELETE', `${fieldsPath('crm', 'people')}/name`);
    await api('DELETE', tablePath('crm', 'people'));
    ok(await admin('DELETE', 'modules/crm'));

    const res = await changes(`since=${T0}`);
    expect(res.status).toBe(200);
    expect(endpoints.listSchemaChanges.response.safeParse(res.body).success).toBe(true);
    expect(res.body.data.map((c: any) => [c.kind, c.id, c.action])).toEqual([
      ['Module', mod.id, 'upserted'],
      ['Table', table.id, 'upserted'],
      ['Field', fieldId, 'upserted'],
      ['Table', table.id, 'upserted'],
      ['Field', fieldId, 'upserted'],
      ['Field', fieldId, 'deleted'],
      ['Table', table.id, 'deleted'],
      ['Module', mod.id, 'deleted'],
    ]);
    expect(res.body.data[0].changedAt).toBe(T0);
    for (const c of res.body.data) expect(c.changedAt).toMatch(MS);
    expect(res.body.meta.asOf).toMatch(MS);
    expect(res.body.page_info).toEqual({ has_more: false, limit: 100, offset: 0 });
  });

  it('covers since <= changedAt <= asOf, both bounds inclusive', async () => {
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:00.000Z', frozen: true }));
    await makeModule(emu, 'a');
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:01.000Z' }));
    await makeModule(emu, 'b');
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:02.000Z' }));
    await makeModule(emu, 'c');
    const names = async (query: string) => (await changes(query)).body.data.map((c: any) => c.changedAt);
    expect(await names('since=2026-03-01T10:00:01Z')).toEqual(['2026-03-01T10:00:01.000Z', '2026-03-01T10:00:02.000Z']);
    expect(await names('since=2026-03-01T10:00:01.001Z')).toEqual(['2026-03-01T10:00:02.000Z']);
    expect(await names('since=2026-03-01T10:00Z&asOf=2026-03-01T10:00:01Z')).toEqual([
      '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:01.000Z',
    ]);
    expect(await names('since=2026-03-01T10:00:03Z')).toEqual([]);
    expect(await names('since=2026-03-01T10:00:02Z&asOf=2026-03-01T10:00:01Z')).toEqual([]);
  });

  it('takes a fraction of seconds of any length, truncated to the millisecond', async () => {
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:01.000Z', frozen: true }));
    await makeModule(emu, 'a');
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:02.000Z' }));
    const names = async (query: string) => {
      const res = await changes(query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((c: any) => c.changedAt);
    };
    expect(await names('since=2026-03-01T10:00:01.0009999999999Z')).toEqual(['2026-03-01T10:00:01.000Z']);
    expect(await names('since=2026-03-01T10:00:01.0019999999999Z')).toEqual([]);
    expect(await names(`since=2026-01-01T00:00Z&asOf=2026-03-01T10:00:01.${'9'.repeat(30)}Z`)).toEqual(['2026-03-01T10:00:01.000Z']);
  });

  it('echoes a given asOf (with milliseconds) and opens a poll at the current time without one', async () => {
    ok(await admin('PUT', 'clock', { now: '2026-03-01T10:00:00.000Z', frozen: true }));
    expect((await changes('since=2026-01-01T00:00Z&asOf=2026-02-01T08:30Z')).body.meta.asOf).toBe('2026-02-01T08:30:00.000Z');
    expect((await changes('since=2026-01-01T00:00Z')).body.meta.asOf).toBe('2026-03-01T10:00:00.000Z');
  });

  describe('an asOf passed back', () => {
    const future = (asOf: string, present: string) =>
      `query.asOf: ${asOf} is after the emulator's present time (${present}): a timestamp from the future is not a ` +
      "cursor; pass back the meta.asOf of the poll's first page";

    it('is refused when later than the present: no poll could have handed it out', async () => {
      ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
      for (const asOf of ['2026-03-01T10:00:00.001Z', '9999-12-31T23:59:59.999Z']) {
        const res = await changes(`since=2026-01-01T00:00Z&asOf=${asOf}`);
        expect(res.status, asOf).toBe(400);
        expect(res.body.error.message).toBe(future(asOf, T0));
      }
      expect((await changes(`since=2026-01-01T00:00Z&asOf=${T0}`)).body.meta.asOf).toBe(T0);
    });

    it('is accepted when it was handed out, also after the clock was set back', async () => {
      ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
      const asOf = (await changes('since=2026-01-01T00:00Z')).body.meta.asOf;
      ok(await admin('PUT', 'clock', { now: '2026-03-01T09:00:00.000Z' }));
      const res = await changes(`since=2026-01-01T00:00Z&asOf=${asOf}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.meta.asOf).toBe(T0);
      expect((await changes('since=2026-01-01T00:00Z&asOf=2026-03-01T10:00:00.001Z')).body.error.message)
        .toBe(future('2026-03-01T10:00:00.001Z', T0));
    });

    it('counts as handed out: a change made after it is stamped after it, so its pages never shift', async () => {
      ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
      expect((await changes(`since=2026-01-01T00:00Z&asOf=${T0}`)).status).toBe(200);
      await makeModule(emu, 'after');
      expect((await changes(`since=2026-01-01T00:00Z&asOf=${T0}`)).body.data).toEqual([]);
      expect((await changes(`since=${T0}`)).body.data.map((c: any) => c.changedAt > T0)).toEqual([true]);
    });
  });

  describe('paging one poll', () => {
    async function fiveChanges() {
      ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
      await makeModule(emu, 'crm');
      for (const name of ['t1', 't2', 't3', 't4']) ok(await api('POST', tablesPath('crm'), { name }));
    }

    it.each([
      ['a frozen clock', true],
      ['a running clock', false],
    ])('later pages pass the first asOf and do not shift under a change made between pages (%s)', async (_what, frozen) => {
      await fiveChanges();
      if (!frozen) ok(await admin('PUT', 'clock', { frozen: false }));
      const since = T0;
      const first = (await changes(`since=${since}&limit=2`)).body;
      expect(first.data.map((c: any) => c.kind)).toEqual(['Module', 'Table']);
      expect(first.page_info).toEqual({ has_more: true, limit: 2, offset: 0 });
      const asOf = first.meta.asOf;

      // A change between pages: created and deleted tables shift nothing in this poll.
      ok(await api('POST', tablesPath('crm'), { name: 'late' }));
      ok(await api('DELETE', tablePath('crm', 't1')));

      const second = (await changes(`since=${since}&asOf=${asOf}&limit=2&offset=2`)).body;
      const third = (await changes(`since=${since}&asOf=${asOf}&limit=2&offset=4`)).body;
      expect(second.meta.asOf).toBe(asOf);
      expect(second.page_info).toEqual({ has_more: true, limit: 2, offset: 2 });
      expect(third.page_info).toEqual({ has_more: false, limit: 2, offset: 4 });
      const seen = [...first.data, ...second.data, ...third.data];
      expect(seen).toHaveLength(5);
      expect(seen.every((c: any) => c.action === 'upserted')).toBe(true);
      for (const c of seen) expect(c.changedAt <= asOf).toBe(true);

      // The next poll starts at the first page's asOf and sees the late changes, after it.
      const next = (await changes(`since=${asOf}`)).body;
      const late = next.data.filter((c: any) => c.changedAt > asOf);
      expect(late.map((c: any) => [c.kind, c.action])).toEqual([['Table', 'upserted'], ['Table', 'deleted']]);
    });

    it('a page past the end is empty', async () => {
      await fiveChanges();
      const res = (await changes(`since=${T0}&offset=50`)).body;
      expect(res.data).toEqual([]);
      expect(res.page_info).toEqual({ has_more: false, limit: 100, offset: 50 });
    });
  });

  it('a frozen clock still stamps changes after a handed-out asOf', async () => {
    ok(await admin('PUT', 'clock', { now: T0, frozen: true }));
    const poll = (await changes('since=2026-01-01T00:00Z')).body;
    expect(poll.meta.asOf).toBe(T0);
    await makeModule(emu, 'after');
    const next = (await changes(`since=${poll.meta.asOf}`)).body.data;
    expect(next).toHaveLength(1);
    expect(next[0].changedAt > T0).toBe(true);
  });
});
