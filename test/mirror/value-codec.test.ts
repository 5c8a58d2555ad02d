import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELD_TYPES } from '../../src/api/field-types.ts';
import { MirrorValueError } from '../../src/mirror/errors.ts';
import type { DialectName } from '../../src/mirror/dialect.ts';
import { DIALECTS as DIALECT_SPECS } from '../../src/mirror/dialects.ts';
import { valueKindOf } from '../../src/mirror/value-kind.ts';
import { apiToSql, sqlToApi } from '../../src/mirror/value-codec.ts';
import { EVERY_TYPE } from './fixtures.ts';

const DIALECTS: DialectName[] = ['sqlite', 'postgres'];

/** What the mirror's own Postgres connection hands back for a bound SQL value. */
function fromPostgres(type: string, value: unknown): unknown {
  if (value === null) return null;
  const kind = valueKindOf(type);
  if (kind === 'json') return JSON.parse(value as string);
  if (kind === 'timestamp') return new Date(value as string);
  return value;
}

describe('type map', () => {
  it('covers every field type on both dialects as DESIGN §3 says', () => {
    expect(FIELD_TYPES.map((t) => [t, valueKindOf(t)])).toEqual(EVERY_TYPE.map((e) => [e.type, valueKindOf(e.type)]));
    expect(valueKindOf('number')).toBe('number');
    expect(valueKindOf('reference')).toBe('reference');
    for (const t of ['multi', 'dmulti', 'any', 'unknown', 'function'] as const) expect(valueKindOf(t)).toBe('json');
    for (const t of ['string', 'choice', 'color', 'time', 'user', 'file'] as const) expect(valueKindOf(t)).toBe('text');
    expect(valueKindOf('appointment')).toBe('range');
    expect(DIALECT_SPECS.postgres.columnTypes.range).toBe('tstzrange');
    expect(DIALECT_SPECS.sqlite.columnTypes.range).toBe('TEXT');
    expect(valueKindOf('some-future-type')).toBe('text');
    expect(DIALECT_SPECS.postgres.columnTypes.timestamp).toBe('timestamptz');
    expect(DIALECT_SPECS.sqlite.columnTypes.boolean).toBe('INTEGER');
  });
});

describe('value codec', () => {
  for (const dialect of DIALECTS) {
    it(`round-trips every type's canonical value exactly [${dialect}]`, () => {
      for (const { type, value } of EVERY_TYPE) {
        const stored = apiToSql(type, value, dialect);
        const back = sqlToApi(type, dialect === 'postgres' ? fromPostgres(type, stored) : stored, dialect);
        expect(back, type).toEqual(value);
      }
    });

    it(`round-trips arbitrary JSON, numbers, strings and timestamps [${dialect}]`, () => {
      const rt = (type: string, v: unknown) => sqlToApi(type, dialect === 'postgres' ? fromPostgres(type, apiToSql(type, v, dialect)) : apiToSql(type, v, dialect), dialect);
      fc.assert(fc.property(fc.jsonValue(), (v) => {
        const normal = JSON.parse(JSON.stringify(v)) as unknown; // -0 becomes 0 in JSON
        expect(rt('any', normal)).toEqual(normal);
      }));
      fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(Object.is(rt('number', n), n)).toBe(true);
      }));
      fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(rt('string', s)).toBe(s);
      }));
      const anyYear = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
      fc.assert(fc.property(anyYear, (d) => {
        expect(rt('timestamp', d.toISOString())).toBe(d.toISOString());
      }));
      // Other spellings go through parsing and formatting, years 1 to 99 included.
      fc.assert(fc.property(anyYear, (d) => {
        const minute = `${d.toISOString().slice(0, 16)}Z`;
        expect(rt('timestamp', minute)).toBe(`${minute.slice(0, 16)}:00.000Z`);
        expect(rt('date', minute)).toBe(minute.slice(0, 10));
      }));
    });
  }

  it('stores booleans as 0/1 on SQLite and as booleans on Postgres', () => {
    expect(apiToSql('boolean', true, 'sqlite')).toBe(1);
    expect(apiToSql('boolean', false, 'sqlite')).toBe(0);
    expect(apiToSql('boolean', false, 'postgres')).toBe(false);
    expect(sqlToApi('boolean', 0, 'sqlite')).toBe(false);
    expect(sqlToApi('boolean', 1n, 'sqlite')).toBe(true);
  });

  it('normalises the update shapes the spec allows to the canonical form', () => {
    expect(apiToSql('timestamp', '2026-01-31T12:00Z', 'sqlite')).toBe('2026-01-31T12:00:00.000Z');
    expect(apiToSql('timestamp', 0, 'sqlite')).toBe('1970-01-01T00:00:00.000Z');
    expect(apiToSql('date', '2026-01-31T23:59:59Z', 'sqlite')).toBe('2026-01-31');
    expect(apiToSql('date', 86_400_000, 'postgres')).toBe('1970-01-02');
    expect(apiToSql('number', ' 12.5 ', 'postgres')).toBe(12.5);
    expect(apiToSql('reference', '42', 'sqlite')).toBe(42);
    expect(apiToSql('string', undefined, 'sqlite')).toBeNull();
    expect(apiToSql('timestamp', '0005-01-01T00:00Z', 'postgres')).toBe('0005-01-01T00:00:00.000Z');
    expect(apiToSql('timestamp', '0099-12-31T23:59:59.9999Z', 'sqlite')).toBe('0099-12-31T23:59:59.999Z');
    expect(apiToSql('date', '0042-03-01T10:00Z', 'sqlite')).toBe('0042-03-01');
    expect(sqlToApi('timestamp', '0005-01-01 00:00:00', 'sqlite')).toBe('0005-01-01T00:00:00.000Z');
  });

  it('reads values typed by other SQL clients', () => {
    expect(sqlToApi('timestamp', '2026-01-31 12:00:00', 'sqlite')).toBe('2026-01-31T12:00:00.000Z');
    expect(sqlToApi('timestamp', '2026-01-31 14:00:00+02:00', 'sqlite')).toBe('2026-01-31T12:00:00.000Z');
    expect(sqlToApi('date', new Date(2026, 0, 31), 'postgres')).toBe('2026-01-31');
    expect(sqlToApi('reference', '9007199254740991', 'postgres')).toBe(9007199254740991);
    expect(sqlToApi('number', 7n, 'sqlite')).toBe(7);
    expect(sqlToApi('string', 5, 'sqlite')).toBe('5');
  });

  it('reads what people type in SQL: an appointment with offsets on SQLite, a boolean as the text true or false', () => {
    expect(sqlToApi('appointment', '[2026-03-01T09:00:00+02:00,2026-03-01 10:30:00+02:00)', 'sqlite')).toBe('[2026-03-01T07:00:00.000Z,2026-03-01T08:30:00.000Z)');
    expect(sqlToApi('boolean', 'true', 'sqlite')).toBe(true);
    expect(sqlToApi('boolean', 'FALSE', 'sqlite')).toBe(false);
    expect(() => sqlToApi('boolean', 'yes', 'sqlite')).toThrow(MirrorValueError);
  });

  it('refuses values that do not fit the type, in both directions', () => {
    const bad: [string, unknown][] = [
      ['number', 'abc'], ['number', Number.POSITIVE_INFINITY], ['number', true],
      ['boolean', 1], ['boolean', 'true'],
      ['date', '2026-02-30'], ['date', 'yesterday'],
      ['timestamp', '2026-01-31T12:00:00'], ['timestamp', 1.5],
      ['reference', 0], ['reference', -3], ['reference', 2 ** 53], ['reference', { id: 1 }],
    ];
    for (const [type, value] of bad) expect(() => apiToSql(type, value, 'sqlite'), `${type} ${String(value)}`).toThrow(MirrorValueError);
    expect(() => sqlToApi('any', '{not json', 'sqlite')).toThrow(/JSON text/);
    expect(() => sqlToApi('boolean', 2, 'sqlite')).toThrow(MirrorValueError);
    expect(() => sqlToApi('date', '31/01/2026', 'postgres')).toThrow(MirrorValueError);
  });

  it('stores appointments as the API writes them, a point as [t,t] on Postgres (where [t,t) is the empty range)', () => {
    const meeting = '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)';
    const point = '[2026-01-31T09:00:00.000Z,2026-01-31T09:00:00.000Z)';
    expect(apiToSql('appointment', meeting, 'postgres')).toBe(meeting);
    expect(apiToSql('appointment', meeting, 'sqlite')).toBe(meeting);
    expect(apiToSql('appointment', point, 'postgres')).toBe('[2026-01-31T09:00:00.000Z,2026-01-31T09:00:00.000Z]');
    expect(apiToSql('appointment', point, 'sqlite')).toBe(point);
    expect(apiToSql('appointment', '[2026-01-31T09:00Z,2026-01-31T10:30Z)', 'sqlite')).toBe(meeting);
    for (const bad of [
      'soon', '[2026-01-31T10:30:00Z,2026-01-31T09:00:00Z)', '[2026-02-30T09:00:00Z,2026-03-01T09:00:00Z)', 5,
      // The service's own form, checked as closely: end before start, 30 February, a 25th hour.
      '[2026-01-31T10:30:00.000Z,2026-01-31T09:00:00.000Z)', '[2026-02-30T09:00:00.000Z,2026-03-01T09:00:00.000Z)',
      '[2026-01-31T09:00:00.000Z,2026-01-31T25:00:00.000Z)', '[2026-01-31T09:00:00.000Z,2026-01-31T10:00:00.000Z]',
    ]) {
      expect(() => apiToSql('appointment', bad, 'postgres'), String(bad)).toThrow(MirrorValueError);
    }
  });

  it('reads a tstzrange as Postgres prints it back as the API\'s [start,end)', () => {
    const read = (value: unknown) => sqlToApi('appointment', value, 'postgres');
    expect(read('["2026-01-31 09:00:00+00","2026-01-31 10:30:00+00")')).toBe('[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)');
    // Another session's zone, microseconds (truncated to the API's milliseconds), inclusive bounds.
    expect(read('["2026-01-31 10:00:00.123456+01","2026-01-31 16:00:00+05:30"]')).toBe('[2026-01-31T09:00:00.123Z,2026-01-31T10:30:00.000Z)');
    expect(read('["2026-01-31 09:00:00+00","2026-01-31 09:00:00+00"]')).toBe('[2026-01-31T09:00:00.000Z,2026-01-31T09:00:00.000Z)');
    // Text stored before the column became a range.
    expect(read('[2026-01-31T09:00:00Z,2026-01-31T10:30:00Z)')).toBe('[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)');
    expect(read('empty')).toBeNull();
    for (const open of ['["2026-01-31 09:00:00+00",)', '(,"2026-01-31 09:00:00+00")', '["2026-01-31 09:00:00+00",infinity)', 'soon']) {
      expect(() => read(open), open).toThrow(MirrorValueError);
    }
    expect(sqlToApi('appointment', '[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)', 'sqlite')).toBe('[2026-01-31T09:00:00.000Z,2026-01-31T10:30:00.000Z)');
    expect(() => sqlToApi('appointment', 'soon', 'sqlite')).toThrow(MirrorValueError);
  });

  it('keeps surprising shapes in text columns readable', () => {
    expect(apiToSql('icon', { icon: 'star', color: '#ffffff' }, 'sqlite')).toBe('{"icon":"star","color":"#ffffff"}');
    expect(apiToSql('string', 12, 'postgres')).toBe('12');
  });
});
