import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ASK_SCHEMA, FIELD_TYPES, recordValueSchema, recordValueShortcut, type ValueMode } from '../../src/api/index.ts';

/**
 * A value shortcut may only say what the schema says: for every value it decides, the schema
 * accepts the value and outputs the same thing, in both modes. Values near the edges of each
 * rule (dates that do not exist, timestamps without Z, non-finite numbers, empty strings).
 */

const dateLike = fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
  .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
const timestampLike = fc.tuple(dateLike, fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }), fc.constantFrom('', '.5', '.123456', 'Z', '.1Z', '.123Z', '.999Z', '.1234Z', '+01:00', '-05:30', '.25+14:00', '-00:00'))
  .map(([d, h, m, s, tail]) => `${d}T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${tail}`);
const anyValue = fc.oneof(
  fc.constantFrom<unknown>(null, undefined, '', ' ', 'true', true, false, 0, -0, 1.5, Number.NaN, Infinity, -Infinity, '12', [], ['a'], {}, '2024-02-29', '2023-02-29', '2024-01-01T00:00Z'),
  fc.string(), fc.double(), fc.integer(), fc.boolean(), dateLike, timestampLike, fc.array(fc.string(), { maxLength: 2 }),
);

describe('recordValueShortcut', () => {
  for (const type of FIELD_TYPES) {
    const shortcut = recordValueShortcut(type);
    if (!shortcut) continue;
    for (const mode of ['create', 'update'] as ValueMode[]) {
      it(`${type} (${mode}) decides only what the schema decides, the same way`, () => {
        const schema = recordValueSchema(type, mode);
        fc.assert(fc.property(anyValue, (raw) => {
          const quick = shortcut(raw);
          if (quick === ASK_SCHEMA) return;
          const parsed = schema.safeParse(raw);
          expect(parsed.success, `${JSON.stringify(raw)}`).toBe(true);
          expect(Object.is(parsed.data, quick), `${JSON.stringify(raw)}: ${String(parsed.data)} vs ${String(quick)}`).toBe(true);
        }), { numRuns: 3000 });
      });
    }
  }

  it('decides the usual valid values without the schema', () => {
    expect(recordValueShortcut('string')!('a')).toBe('a');
    expect(recordValueShortcut('number')!(1.5)).toBe(1.5);
    expect(recordValueShortcut('date')!('2024-02-29')).toBe('2024-02-29');
    expect(recordValueShortcut('timestamp')!('2024-01-01T00:00Z')).toBe('2024-01-01T00:00:00.000Z');
    expect(recordValueShortcut('number')!(Number.NaN)).toBe(ASK_SCHEMA);
  });
});
