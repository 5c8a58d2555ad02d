import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../src/api/index.ts';
import { apiOf, call, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, changesAfter, field, makeModule, makeTable, ok, openPoll, snapshot, tablePath } from '../helpers/schema.ts';

describe('admin surface', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  let admin: ReturnType<typeof adminOf>;
  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    admin = adminOf(emu);
  });
  beforeEach(async () => {
    ok(await admin('POST', 'reset'));
  });
  afterAll(() => emu.close());

  describe('modules', () => {
    it('creates a module: 201 with documented defaults', async () => {
      const res = await admin('POST', 'modules', { name: 'crm' });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^m[0-9]+$/), name: 'crm', labels: {},
        icon: { color: '#546e7a', filling: 0, icon: 'folder' }, isHidden: false, hideNavigation: false,
        openRoles: ['admin', 'editor'], tables: [],
      });
    });

    it('keeps given properties', async () => {
      const body = {
        name: 'ops', labels: { '': 'Ops' }, icon: { icon: 'build', color: '#112233', filling: 1 }, isHidden: true,
        hideNavigation: true, openRoles: ['admin'],
      };
      const res = await admin('POST', 'modules', body);
      expect(res.body.data).toEqual({ id: expect.any(String), ...body, tables: [] });
      expect((await api('GET', '')).body.data.modules[0]).toEqual(res.body.data);
    });

    it.each([
      [{}, 'body.name'],
      [{ name: 'Bad' }, 'body.name'],
      [{ name: 'x', openRoles: ['owner'] }, 'body.openRoles'],
      [{ name: 'x', tables: [] }, 'tables'],
      [{ name: 'x', isHidden: 1 }, 'body.isHidden'],
    ])('answers 400 for %j', async (body, text) => {
      const res = await admin('POST', 'modules', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });

    it('answers 400 for an existing module', async () => {
      await makeModule(emu, 'crm');
      const res = await admin('POST', 'modules', { name: 'crm' });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/crm already exists/);
    });

    it('deletes a module with its tables, fields, records and change logs, logging each deletion', async () => {
      const mod = await makeModule(emu, 'crm');
      await makeModule(emu, 'ops');
      const people = await makeTable(emu, 'crm', 'people', { hasHistory: true }, [field('name', 'string')]);
      await makeTable(emu, 'ops', 'kept', {}, [field('x', 'string')]);
      ok(await api('POST', `${tablePath('crm', 'people')}/records`, { records: [{ name: 'a' }] }));
      const fieldId = (await api('GET', tablePath('crm', 'people'))).body.data.fields[0].id;
      const poll = await openPoll(emu);

      const res = await admin('DELETE', 'modules/crm');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { id: mod.id } });
      expect((await api('GET', '')).body.data.modules.map((m: any) => m.name)).toEqual(['ops']);
      expect((await api('GET', 'modules/crm/tables')).status).toBe(404);
      const changes = await changesAfter(emu, poll);
      expect(changes.map((c: any) => [c.kind, c.id, c.action])).toEqual([
        ['Field', fieldId, 'deleted'], ['Table', people.id, 'deleted'], ['Module', mod.id, 'deleted'],
      ]);
      // A module of the same name starts empty.
      await makeModule(emu, 'crm');
      const again = await makeTable(emu, 'crm', 'people', { hasHistory: true }, [field('name', 'string')]);
      expect(again.id).not.toBe(people.id);
      const records = await api('GET', `${tablePath('crm', 'people')}/records`);
      expect(records.body.data).toEqual([]);
    });

    it('answers 404 for an unknown module and 400 for a malformed name', async () => {
      expect((await admin('DELETE', 'modules/nope')).status).toBe(404);
      const bad = await admin('DELETE', 'modules/Not-A-Name');
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('path.name');
    });
  });

  describe('reset and seed', () => {
    const seed = {
      name: 'Seeded',
      modules: [{ name: 'crm', tables: [{ name: 'people', fields: [field('name', 'string')], records: [{ name: 'Ann' }] }] }],
    };

    it('reset empties the workspace, the change log, the clock and the faults', async () => {
      await makeModule(emu, 'crm');
      ok(await admin('PUT', 'clock', { now: '2030-01-01T00:00Z', frozen: true }));
      ok(await admin('PUT', 'faults', { latencyMs: 5 }));
      const res = await admin('POST', 'reset');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ name: 'Demo workspace', modules: [] });
      expect((await api('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.data).toEqual([]);
      const clock = (await admin('GET', 'clock')).body.data;
      expect(clock.frozen).toBe(false);
      expect(Math.abs(Date.parse(clock.now) - Date.now())).toBeLessThan(5000);
      expect((await admin('GET', 'faults')).body.data.latencyMs).toBe(0);
    });

    it('reset with a seed body loads it, ids starting afresh', async () => {
      await makeModule(emu, 'old');
      const res = await admin('POST', 'reset', seed);
      expect(res.status).toBe(200);
      expect(res.body.data.name).toBe('Seeded');
      expect(res.body.data.modules[0]).toMatchObject({ id: 'm1', name: 'crm', tables: [{ id: 't1', name: 'people' }] });
      const records = (await api('GET', `${tablePath('crm', 'people')}/records`)).body.data;
      expect(records.map((r: any) => r.values.name)).toEqual(['Ann']);
    });

    it('reset with a bad seed answers 400 and changes nothing', async () => {
      await makeModule(emu, 'keep');
      ok(await admin('PUT', 'clock', { now: '2030-01-01T00:00Z', frozen: true }));
      const before = await snapshot(emu);
      for (const bad of [
        { modules: [{ name: 'a', tables: [{ name: 't', fields: [field('x', 'any')] }] }] },
        { modules: [{ name: 'a', tables: [{ name: 't', fields: [field('x', 'reference', { refTableName: 'zz' })] }] }] },
        { modules: [{ name: 'a' }, { name: 'a' }] },
        { modules: [{ name: 'a', tables: [{ name: 't', fields: [field('x', 'number')], records: [{ x: 'no' }] }] }] },
      ]) {
        const res = await admin('POST', 'reset', bad);
        expect(res.status, JSON.stringify(bad)).toBe(400);
        expect(res.body.error.message).toMatch(/^body\.modules\[\d\]/);
      }
      expect(await snapshot(emu)).toEqual(before);
      expect((await admin('GET', 'clock')).body.data).toEqual({ now: '2030-01-01T00:00:00.000Z', frozen: true });
    });

    it('POST seed loads into the current workspace: 201; a conflict answers 400 and changes nothing', async () => {
      await makeModule(emu, 'ops');
      const res = await admin('POST', 'seed', seed);
      expect(res.status).toBe(201);
      expect(res.body.data.modules.map((m: any) => m.name)).toEqual(['ops', 'crm']);
      const before = await snapshot(emu);
      const again = await admin('POST', 'seed', { modules: [{ name: 'new' }, { name: 'crm' }] });
      expect(again.status).toBe(400);
      expect(again.body.error.message).toContain('body.modules[1]');
      expect(await snapshot(emu)).toEqual(before);
    });
  });

  describe('clock', () => {
    it('reads the real time by default', async () => {
      const res = await admin('GET', 'clock');
      expect(res.status).toBe(200);
      expect(res.body.data.frozen).toBe(false);
      expect(Math.abs(Date.parse(res.body.data.now) - Date.now())).toBeLessThan(5000);
    });

    it('sets a frozen time that stamps changes exactly', async () => {
      const res = await admin('PUT', 'clock', { now: '2027-05-06T07:08:09.123Z', frozen: true });
      expect(res.body.data).toEqual({ now: '2027-05-06T07:08:09.123Z', frozen: true });
      await new Promise((r) => setTimeout(r, 20));
      expect((await admin('GET', 'clock')).body.data.now).toBe('2027-05-06T07:08:09.123Z');
      await makeModule(emu, 'crm');
      const changes = (await api('GET', 'schema/changes?since=2027-01-01T00:00Z')).body.data;
      expect(changes[0].changedAt).toBe('2027-05-06T07:08:09.123Z');
    });

    it('advances, keeps running when not frozen, freezes and releases in place', async () => {
      ok(await admin('PUT', 'clock', { now: '2027-01-01T00:00Z', frozen: true }));
      expect((await admin('PUT', 'clock', { advanceMs: 1500 })).body.data).toEqual({ now: '2027-01-01T00:00:01.500Z', frozen: true });
      const running = (await admin('PUT', 'clock', { frozen: false })).body.data;
      expect(running.frozen).toBe(false);
      await new Promise((r) => setTimeout(r, 30));
      const later = (await admin('GET', 'clock')).body.data.now;
      expect(Date.parse(later)).toBeGreaterThan(Date.parse('2027-01-01T00:00:01.500Z'));
      expect(Date.parse(later)).toBeLessThan(Date.parse('2027-01-01T00:00:10Z'));
      const frozen = (await admin('PUT', 'clock', { frozen: true })).body.data;
      expect(frozen.frozen).toBe(true);
      await new Promise((r) => setTimeout(r, 20));
      expect((await admin('GET', 'clock')).body.data.now).toBe(frozen.now);
      // `now` without `frozen` keeps the clock frozen.
      expect((await admin('PUT', 'clock', { now: '2028-01-01T00:00Z' })).body.data).toEqual({ now: '2028-01-01T00:00:00.000Z', frozen: true });
    });

    it('DELETE returns to the real time', async () => {
      ok(await admin('PUT', 'clock', { now: '2000-01-01T00:00Z', frozen: true }));
      const res = await admin('DELETE', 'clock');
      expect(res.body.data.frozen).toBe(false);
      expect(Math.abs(Date.parse(res.body.data.now) - Date.now())).toBeLessThan(5000);
    });

    it.each([
      [{}, 'send now, advanceMs or frozen'],
      [{ now: '2027-02-30T00:00Z' }, 'body.now'],
      [{ now: '2027-01-01' }, 'body.now'],
      [{ now: '2027-01-01T00:00Z', advanceMs: 5 }, 'body.advanceMs'],
      [{ advanceMs: -1 }, 'body.advanceMs'],
      [{ advanceMs: 1.5 }, 'body.advanceMs'],
      [{ frozen: 'yes' }, 'body.frozen'],
      [{ speed: 2 }, 'speed'],
    ])('answers 400 for %j', async (body, text) => {
      const res = await admin('PUT', 'clock', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });

    it.each([
      [{ now: '9999-12-31T23:59Z' }],
      [{ now: '9999-01-01T00:00:00.001Z' }],
      [{ now: '1969-12-31T23:59:59.999Z' }],
      [{ now: '0000-01-01T00:00Z', frozen: true }],
    ])('answers 400 for a time outside 1970-01-01 to 9999-01-01: %j, and keeps the clock', async (body) => {
      ok(await admin('PUT', 'clock', { now: '2027-01-01T00:00Z', frozen: true }));
      const res = await admin('PUT', 'clock', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(body.now);
      expect(res.body.error.message).toMatch(/1970-01-01T00:00:00\.000Z.*9999-01-01T00:00:00\.000Z/);
      expect((await admin('GET', 'clock')).body.data).toEqual({ now: '2027-01-01T00:00:00.000Z', frozen: true });
    });

    it('answers 400 for an advance past the bound, and keeps the clock', async () => {
      ok(await admin('PUT', 'clock', { now: '9998-06-01T00:00Z', frozen: true }));
      const res = await admin('PUT', 'clock', { advanceMs: 365 * 24 * 3600 * 1000 });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('9999-01-01T00:00:00.000Z');
      expect((await admin('GET', 'clock')).body.data.now).toBe('9998-06-01T00:00:00.000Z');
    });

    it('at the bound, every timestamp it hands out is still one the API can express', async () => {
      ok(await admin('PUT', 'clock', { now: '9999-01-01T00:00Z', frozen: true }));
      const stamps: string[] = [];
      for (let i = 0; i < 3; i++) {
        await makeModule(emu, `late${i}`);
        const page = ok(await api('GET', 'schema/changes?since=9998-12-31T00:00Z')).body;
        stamps.push(page.meta.asOf, ...page.data.map((c: { changedAt: string }) => c.changedAt));
      }
      for (const stamp of stamps) expect(parseTimestamp(stamp), stamp).toBeDefined();
    });
  });

  describe('faults', () => {
    it('GET shows the settings, all off by default', async () => {
      const res = await admin('GET', 'faults');
      expect(res.body.data).toEqual({
        latencyMs: 0, latencyJitterMs: 0, errorRate: 0, rateLimitRate: 0, retryAfterSeconds: 1, dropRate: 0,
        injected: { errors: 0, rateLimited: 0, dropped: 0 },
      });
    });

    it('errorRate 1: API requests answer 500 and change nothing; the admin surface still works', async () => {
      await makeModule(emu, 'crm');
      ok(await admin('PUT', 'faults', { errorRate: 1 }));
      const res = await api('POST', 'modules/crm/tables', { name: 'people' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { message: expect.stringContaining('injected') } });
      expect((await admin('GET', 'faults')).body.data.injected.errors).toBe(1);
      ok(await admin('DELETE', 'faults'));
      expect((await api('GET', 'modules/crm/tables')).body.data).toEqual([]);
    });

    it('rateLimitRate 1: 429 with Retry-After', async () => {
      ok(await admin('PUT', 'faults', { rateLimitRate: 1, retryAfterSeconds: 7 }));
      const res = await api('GET', '');
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.body.error.message).toBeTruthy();
    });

    it('dropRate 1: the connection closes without an answer', async () => {
      ok(await admin('PUT', 'faults', { dropRate: 1 }));
      await expect(fetch(`${emu.url}${emu.base}`, { headers: { authorization: `Bearer ${emu.apiKey}` } })).rejects.toThrow();
      expect((await admin('GET', 'faults')).body.data.injected.dropped).toBe(1);
    });

    it('latencyMs delays every API answer', async () => {
      ok(await admin('PUT', 'faults', { latencyMs: 250 }));
      const started = performance.now();
      expect((await api('GET', '')).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(240);
      ok(await admin('DELETE', 'faults'));
      const quick = performance.now();
      await api('GET', '');
      expect(performance.now() - quick).toBeLessThan(200);
    });

    it('a seed makes the fault sequence reproducible', async () => {
      const run = async () => {
        ok(await admin('PUT', 'faults', { errorRate: 0.5, seed: 42 }));
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) statuses.push((await api('GET', '')).status);
        return statuses;
      };
      const first = await run();
      expect(first).toContain(500);
      expect(first).toContain(200);
      expect(await run()).toEqual(first);
    });

    it.each([
      [{ errorRate: 2 }, 'body.errorRate'],
      [{ latencyMs: -5 }, 'body.latencyMs'],
      [{ dropRate: 'often' }, 'body.dropRate'],
      [{ chaos: true }, 'chaos'],
    ])('answers 400 for %j and keeps the settings', async (body, text) => {
      const res = await admin('PUT', 'faults', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
      expect((await admin('GET', 'faults')).body.data.errorRate).toBe(0);
    });
  });

  it('answers 404 with the error body for an unknown admin path', async () => {
    const res = await call(emu.url, 'GET', '/_emulator/nothing', { token: emu.adminToken });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBeTruthy();
  });
});
