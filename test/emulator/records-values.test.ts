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

  it('say a computed field (function, reverse) is computed, even for null', async () => {
    const [id] = await fx.ws.createRecords(MODULE, 'things', [{}]);
    for (const name of COMPUTED_FIELDS) {
      for (const value of [1, 'x', null]) {
        const created = await fx.api('POST', fx.records('things'), { records: [{ [name]: value }] });
        expect(created.body.error.message).toMatch(new RegExp(`body\\.records\\[0\\]\\.${name}: .*computed`));
        const updated = await fx.api('PATCH', fx.records('things'), { records: [{ id, [name]: value }] });
        expect(updated.body.error.message).toMatch(new RegExp(`body\\.records\\[0\\]\\.${name}: .*computed`));
      }
    }
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
