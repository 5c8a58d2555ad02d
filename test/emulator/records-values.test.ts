import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPUTED_FIELDS, TARGET_COUNT, allTypeFields, caseLabel, valueCases, type CaseContext } from '../../src/conformance/checks/record-value-cases.ts';
import { ok } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, valuesOf, type RecordsFixture } from './record-fixtures.ts';

// Which values each type takes, and how they read back, are the conformance checks records.values.*
// (test/emulator/conformance.test.ts). What stays here is the emulator's own wording, which the
// description leaves open ("Message texts: not shown"): a refused value names its place.

let fx: RecordsFixture;
let cases: CaseContext;

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'targets');
  await fx.ws.createTable(MODULE, 'things', {}, allTypeFields('targets'));
  const targets = await fx.ws.createRecords(MODULE, 'targets', Array.from({ length: TARGET_COUNT }, () => ({})));
  const table = await fx.ws.getTable(MODULE, 'things');
  const options = new Map<string, string>();
  for (const f of table.fields) for (const o of Array.isArray(f.options) ? f.options : []) options.set(`${f.name}.${o.name}`, o.id);
  cases = { targets, option: (f, n) => options.get(`${f}.${n}`)! };
});
afterAll(() => fx.emu.close());

describe('messages of refused record values', () => {
  it('name the record and the field, for every refused value of the conformance cases, on create and on update', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    const refused = valueCases(cases).filter((c) => !c.accepted);
    expect(refused.length).toBeGreaterThan(60);
    for (const c of refused) {
      const res = c.on === 'create'
        ? await fx.api('POST', fx.records('things'), { records: [{ [c.field]: c.sent }] })
        : await fx.api('PATCH', fx.records('things'), { records: [{ id, [c.field]: c.sent }] });
      expect(res.status, `${caseLabel(c)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message, caseLabel(c)).toContain(`body.records[0].${c.field}`);
    }
  });

  it('say a computed field (function, reverse) is computed, for any value but null', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    for (const name of COMPUTED_FIELDS) {
      for (const value of [1, 'x', false, [], {}]) {
        const created = await fx.api('POST', fx.records('things'), { records: [{ [name]: value }] });
        expect(created.body.error.message).toMatch(new RegExp(`body\\.records\\[0\\]\\.${name}: .*computed`));
        const updated = await fx.api('PATCH', fx.records('things'), { records: [{ id, [name]: value }] });
        expect(updated.body.error.message).toMatch(new RegExp(`body\\.records\\[0\\]\\.${name}: .*computed`));
      }
    }
  });
});

describe('null for a computed field (function, reverse)', () => {
  // "On update, any field may be set to null to clear its value": a computed field has no value
  // of its own to clear, so null changes nothing. On create null means no value, as for any field.
  it('is accepted on update and on create, and the field keeps its computed value', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{ n: 4, s: 'before' }]);
    const updated = await fx.api('PATCH', fx.records('things'), { records: [{ id, fn: null, rev: null, s: 'after' }] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({ data: { updatedIds: [id] } });
    expect(await valuesOf(fx, 'things', id!)).toMatchObject({ n: 4, fn: 5, rev: null, s: 'after' });
    const created = await fx.api('POST', fx.records('things'), { records: [{ n: 1, fn: null, rev: null }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await valuesOf(fx, 'things', created.body.data.ids[0])).toMatchObject({ n: 1, fn: 2, rev: null });
  });

  it('does not make a record invalid elsewhere: other values in the request are still checked', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{ n: 4 }]);
    const res = await fx.api('PATCH', fx.records('things'), { records: [{ id, fn: null, n: 'abc' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body.records[0].n');
    expect(res.body.error.message).not.toContain('body.records[0].fn');
  });
});

describe('timestamps and dates', () => {
  it('take a fraction of seconds of any length, kept to the millisecond', async () => {
    const long = `2024-01-01T10:00:00.123${'4'.repeat(20)}Z`;
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{ ts: long, ap: `[${long},${long})` }]);
    const updated = await fx.api('PATCH', fx.records('things'), { records: [{ id, d: long }] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(await valuesOf(fx, 'things', id!)).toMatchObject({
      ts: '2024-01-01T10:00:00.123Z', ap: '[2024-01-01T10:00:00.123Z,2024-01-01T10:00:00.123Z)', d: '2024-01-01',
    });
  });
});

describe('date-times with an offset (date and appointment updates)', () => {
  // The value table gives date and appointment updates "an ISO 8601 string", timestamps an "ISO
  // 8601 UTC string": an offset is taken, and names the instant it writes. A date is that
  // instant's date in UTC, as for Unix milliseconds and …Z: one instant gives one date however it
  // is written (docs/emulator.md, Values).
  it('set a date to the UTC date of the instant, on both sides of midnight', async () => {
    const cases: [sent: string, date: string][] = [
      ['2024-02-29T23:30:00+02:00', '2024-02-29'], // 21:30Z: the same date in UTC
      ['2024-02-29T01:30:00+02:00', '2024-02-28'], // 23:30Z the day before
      ['2024-02-28T23:30:00-02:00', '2024-02-29'], // 01:30Z the day after
      ['2023-12-31T23:00:00-05:00', '2024-01-01'], // into the next year
      ['2024-03-01T00:00:00+00:00', '2024-03-01'],
      ['2024-03-01T00:00-00:00', '2024-03-01'],
      ['2024-03-01T12:00:00.5+05:45', '2024-03-01'],
    ];
    const ids = await fx.ws.createRecords(MODULE, 'things', cases.map(() => ({})));
    const res = await fx.api('PATCH', fx.records('things'), { records: cases.map(([sent], i) => ({ id: ids[i], d: sent })) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const [i, [sent, date]] of cases.entries()) expect((await valuesOf(fx, 'things', ids[i]!)).d, sent).toBe(date);
  });

  it('set an appointment to the empty range at that instant, in UTC', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    ok(await fx.api('PATCH', fx.records('things'), { records: [{ id, ap: '2024-01-01T10:00:00+01:00' }] }));
    expect((await valuesOf(fx, 'things', id!)).ap).toBe('[2024-01-01T09:00:00.000Z,2024-01-01T09:00:00.000Z)');
    ok(await fx.api('PATCH', fx.records('things'), { records: [{ id, ap: '2024-12-31T23:30:00.25-01:30' }] }));
    expect((await valuesOf(fx, 'things', id!)).ap).toBe('[2025-01-01T01:00:00.250Z,2025-01-01T01:00:00.250Z)');
  });

  it('are refused (400) without an offset, with an impossible offset, outside the years 0000 to 9999 in UTC, and where the table wants UTC', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    const refused: [field: string, sent: string][] = [
      ['d', '2024-03-01T10:00'], ['d', '2024-03-01T10:00:00+0200'], ['d', '2024-03-01T10:00:00+02'],
      ['d', '2024-03-01T10:00:00+24:00'], ['d', '2024-03-01T10:00:00+02:60'], ['d', '2024-02-30T10:00:00+02:00'],
      ['d', '0000-01-01T00:30:00+01:00'], ['d', '9999-12-31T23:00:00-02:00'],
      ['ap', '2024-01-01T10:00:00'], ['ap', '0000-01-01T00:00:00+00:01'],
      // The range form is "with UTC timestamps"; a timestamp is an "ISO 8601 UTC string".
      ['ap', '[2024-01-01T10:00:00+01:00,2024-01-01T11:00:00+01:00)'], ['ts', '2024-01-01T10:00:00+01:00'],
    ];
    for (const [name, sent] of refused) {
      const res = await fx.api('PATCH', fx.records('things'), { records: [{ id, [name]: sent }] });
      expect(res.status, `${name} ← ${sent}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message).toContain(`body.records[0].${name}`);
      // A refused date or appointment string is told every string shape the update takes.
      if (name !== 'ts') expect(res.body.error.message).toContain('or an offset ±HH:MM');
    }
    // A create takes the create shapes only: YYYY-MM-DD and a range.
    for (const [name, sent] of [['d', '2024-03-01T10:00:00+02:00'], ['ap', '2024-01-01T10:00:00+01:00']] as const) {
      const res = await fx.api('POST', fx.records('things'), { records: [{ [name]: sent }] });
      expect(res.status, `${name} ← ${sent} (create): ${JSON.stringify(res.body)}`).toBe(400);
    }
    expect(await valuesOf(fx, 'things', id!)).toMatchObject({ d: null, ts: null, ap: null });
  });
});

describe('choices', () => {
  it('refuse (400) an update array of two or more options, saying a choice holds one', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{ c: 'open' }]);
    const res = await fx.api('PATCH', fx.records('things'), { records: [{ id, c: ['open', 'closed'] }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('body.records[0].c: a choice field holds one option: send an array of at most one, not 2');
    expect((await valuesOf(fx, 'things', id!)).c).toBe(cases.option('c', 'open'));
  });
});

describe('icons', () => {
  // A read returns a name, or the JSON of an icon with a color or filling: text that is a JSON
  // object is that object, whichever request wrote it, so the same text is stored the same way.
  it('read a JSON-encoded icon sent on create as the same text sent on update does', async () => {
    const sent = ['{"icon":"star"}', '{"icon":"heart","filling":1,"color":"#ff0000"}', 'moon', '{moon'];
    const created = await fx.ws.createRecords(MODULE, 'things', sent.map((ic) => ({ ic })));
    const updated = await fx.ws.createRecords(MODULE, 'things', sent.map(() => ({})));
    const res = await fx.api('PATCH', fx.records('things'), { records: sent.slice(0, 2).map((ic, i) => ({ id: updated[i], ic })) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const read = async (ids: string[]) => Promise.all(ids.map(async (id) => (await valuesOf(fx, 'things', id)).ic));
    expect(await read(created)).toEqual(['star', '{"icon":"heart","color":"#ff0000","filling":1}', 'moon', '{moon']);
    expect(await read(updated.slice(0, 2))).toEqual(['star', '{"icon":"heart","color":"#ff0000","filling":1}']);
  });

  it('refuse (400) on create a JSON object that is no icon, as on update', async () => {
    for (const ic of ['{"color":"#ff0000"}', '{"icon":"x","extra":1}', '{"icon":""}', '{}']) {
      const res = await fx.api('POST', fx.records('things'), { records: [{ ic }] });
      expect(res.status, `${ic}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message).toContain('body.records[0].ic');
    }
  });
});

describe('Unix milliseconds', () => {
  const first = Date.parse('0000-01-01T00:00:00.000Z');
  const last = Date.parse('9999-12-31T23:59:59.999Z');

  it('are refused (400) outside the years 0000 to 9999, which dates and timestamps are written in', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    for (const ms of [8_640_000_000_000_000, -8_640_000_000_000_000, -62_198_755_200_000, first - 1, last + 1]) {
      for (const name of ['d', 'ts', 'ap']) {
        const res = await fx.api('PATCH', fx.records('things'), { records: [{ id, [name]: ms }] });
        expect(res.status, `${name} ← ${ms}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.error.message).toContain(`body.records[0].${name}`);
      }
    }
    expect(await valuesOf(fx, 'things', id!)).toMatchObject({ d: null, ts: null, ap: null });
  });

  it('are taken at both ends of that range', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    ok(await fx.api('PATCH', fx.records('things'), { records: [{ id, d: first, ts: first, ap: last }] }));
    expect(await valuesOf(fx, 'things', id!)).toMatchObject({
      d: '0000-01-01', ts: '0000-01-01T00:00:00.000Z', ap: '[9999-12-31T23:59:59.999Z,9999-12-31T23:59:59.999Z)',
    });
  });
});
