import type { FieldCreate } from '../../api/index.ts';
import { field } from './fixtures.ts';

/**
 * The value table of the API description ("Resources: value shapes by field type"), as cases:
 * values a create or an update must accept, and values outside the shapes it gives, which must be
 * refused. A case the table leaves open (an option's id for a choice, a repeated multi option,
 * dynamic choices, which the table does not list) is `open`: the suite observes it next to the
 * emulator's choice instead of judging it. `stored` is the form the emulator returns (its
 * documented canonical form, docs/emulator.md "Values").
 */

/** One field of every writable type of the value table, plus dynamic choices and two computed fields. */
export function allTypeFields(targetTable: string): FieldCreate[] {
  return [
    field('s', 'string'),
    field('h', 'html'),
    field('n', 'number'),
    field('b', 'boolean'),
    field('c', 'choice', { options: [{ name: 'open' }, { name: 'closed' }, { name: 'o1' }] }),
    field('m', 'multi', { options: [{ name: 'red' }, { name: 'green' }, { name: 'blue' }] }),
    field('col', 'color'),
    field('d', 'date'),
    field('ts', 'timestamp'),
    field('t', 'time'),
    field('ti', 'timeinterval'),
    field('ap', 'appointment'),
    field('ic', 'icon'),
    field('fi', 'file'),
    field('u', 'user'),
    field('r', 'reference', { refTableName: targetTable }),
    field('dc', 'dchoice', { options: `select ${targetTable}` }),
    field('dm', 'dmulti', { options: `select ${targetTable}` }),
    field('fn', 'function', { expression: 'n + 1' }),
    field('rev', 'reverse', { refTableName: targetTable }),
  ];
}

/** The fields of `allTypeFields` that take a value (the computed ones do not). */
export const WRITABLE_FIELDS = ['s', 'h', 'n', 'b', 'c', 'm', 'col', 'd', 'ts', 't', 'ti', 'ap', 'ic', 'fi', 'u', 'r', 'dc', 'dm'] as const;
export const COMPUTED_FIELDS = ['fn', 'rev'] as const;
/** How many target records the cases pick among. */
export const TARGET_COUNT = 7;

/** What the cases need from the table made for them. */
export interface CaseContext {
  /** The id of an option of a choice or multi field, by its name. */
  option(fieldName: string, optionName: string): string;
  /** The ids of the TARGET_COUNT records of the referenced table, in creation order. */
  targets: readonly string[];
}

export interface ValueCase {
  field: string;
  /** create or update */
  on: 'create' | 'update';
  sent: unknown;
  /** For an accepted value: the form the emulator returns it in. */
  stored?: unknown;
  accepted: boolean;
  /** Left open by the value table: observed, not judged. */
  open: boolean;
}

type Pair = readonly [sent: unknown, stored: unknown];
interface FieldCases {
  field: string;
  createOk?: Pair[];
  createBad?: unknown[];
  updateOk?: Pair[];
  updateBad?: unknown[];
  /** The same lists for what the value table leaves open. */
  open?: Omit<FieldCases, 'field' | 'open'>;
}

const TS = '2024-05-06T07:08:09.123Z';
const TS_MS = Date.parse(TS);

function byField(c: CaseContext): FieldCases[] {
  const o = (f: string, n: string) => c.option(f, n);
  const [, , , , t5, t6, t7] = c.targets;
  const first = Number(c.targets[0]);
  return [
    { field: 's', createOk: [['abc', 'abc'], ['', '']], createBad: [5, true, ['a']], updateOk: [['x', 'x']], updateBad: [5] },
    { field: 'h', createOk: [['<b>x</b>', '<b>x</b>']], createBad: [1], updateOk: [['<i>y</i>', '<i>y</i>']], updateBad: [{}] },
    {
      field: 'n', createOk: [[1.5, 1.5], [-3, -3], [0, 0]], createBad: ['12', true, 'abc'],
      updateOk: [[7, 7], ['12', 12]], updateBad: ['abc', '', true, '1,5'],
      open: { updateOk: [[' -1.5e2 ', -150], ['.5', 0.5]] },
    },
    {
      field: 'b', createOk: [[true, true], [false, false]], createBad: [1, 0, 'true'],
      updateOk: [[false, false], [true, true]], updateBad: [1, 0, 'false'],
    },
    {
      field: 'c', createOk: [['closed', o('c', 'closed')]], createBad: ['nope', ['open'], [o('c', 'open')], '', 3],
      updateOk: [[['open'], o('c', 'open')]], updateBad: ['nope', 3],
      open: {
        createOk: [[o('c', 'open'), o('c', 'open')]],
        updateOk: [[o('c', 'closed'), o('c', 'closed')], [[o('c', 'closed')], o('c', 'closed')], [[], null]],
        updateBad: [['open', 'closed']],
      },
    },
    {
      field: 'm', createOk: [[['red', 'green'], [o('m', 'red'), o('m', 'green')]]], createBad: ['red', ['purple']],
      updateOk: [[['blue'], [o('m', 'blue')]]], updateBad: ['red', [1]],
      open: { createOk: [[[o('m', 'red'), 'green'], [o('m', 'red'), o('m', 'green')]], [[], []]], createBad: [['red', 'red'], ['red', o('m', 'red')]] },
    },
    { field: 'col', createOk: [['#a1B2c3', '#a1B2c3']], createBad: ['red', '#abc', '#a1b2c3ff'], updateOk: [['#000000', '#000000']], updateBad: ['000000'] },
    {
      field: 'd', createOk: [['2024-02-29', '2024-02-29']], createBad: ['2023-02-29', '2024-13-01', 0, '2024-01-01T00:00Z'],
      updateOk: [
        ['2024-03-01', '2024-03-01'], [0, '1970-01-01'], ['2024-03-01T23:59:59Z', '2024-03-01'], [TS_MS, '2024-05-06'],
        // "an ISO 8601 string": an offset too. Noon is the same date in the offset and in UTC.
        ['2024-03-02T12:00:00+02:00', '2024-03-02'], ['2024-03-03T12:00:00-05:00', '2024-03-03'],
      ],
      updateBad: ['yesterday'],
      open: {
        // Near midnight the date in the offset and the date in UTC differ: which one is kept is open.
        updateOk: [['2024-02-29T01:30:00+02:00', '2024-02-28'], ['2024-02-28T23:30:00-02:00', '2024-02-29']],
        updateBad: [1.5, '2024-03-01T10:00'],
      },
    },
    {
      field: 'ts', createOk: [['2024-01-01T10:00Z', '2024-01-01T10:00:00.000Z'], [TS, TS], ['2024-01-01T10:00:00.1234Z', '2024-01-01T10:00:00.123Z']],
      createBad: [TS_MS, '2024-01-01T10:00:00', '2024-01-01', '2024-02-30T00:00Z'],
      updateOk: [[TS_MS, TS], [TS, TS]], updateBad: ['now'],
      open: { updateBad: [1.5] },
    },
    { field: 't', createOk: [['09:30', '09:30'], ['23:59', '23:59']], createBad: ['9:30', '24:00', '09:30:00'], updateOk: [['00:00', '00:00']], updateBad: ['12:60'] },
    {
      field: 'ti', createOk: [['09:00-17:30', '09:00-17:30']], createBad: ['01:30:00', '9:00-17:00'],
      updateOk: [['01:30:00', '01:30:00']], updateBad: ['09:00-17:00', '1:30'],
    },
    {
      field: 'ap',
      createOk: [['[2024-01-01T10:00Z,2024-01-01T11:30Z)', '[2024-01-01T10:00:00.000Z,2024-01-01T11:30:00.000Z)']],
      createBad: ['2024-01-01T10:00Z', TS_MS, '[2024-01-01T10:00Z,2024-01-01T11:00Z]'],
      updateOk: [
        ['[2024-01-01T10:00:00Z,2024-01-01T10:15:00Z)', '[2024-01-01T10:00:00.000Z,2024-01-01T10:15:00.000Z)'],
        [TS, `[${TS},${TS})`],
        [TS_MS, `[${TS},${TS})`],
        ['2024-01-01T10:00:00+01:00', '[2024-01-01T09:00:00.000Z,2024-01-01T09:00:00.000Z)'],
      ],
      updateBad: ['soon'],
      open: { createBad: ['[2024-01-01T11:00Z,2024-01-01T10:00Z)'] },
    },
    {
      field: 'ic', createOk: [['star', 'star']], createBad: [5],
      updateOk: [['{"icon":"heart","filling":1,"color":"#ff0000"}', '{"icon":"heart","color":"#ff0000","filling":1}']],
      updateBad: ['star'],
      open: {
        // The create shape is a name: whether a JSON-encoded icon is taken too, and how, is open.
        createOk: [['{"icon":"star"}', 'star'], ['{"icon":"heart","filling":1,"color":"#ff0000"}', '{"icon":"heart","color":"#ff0000","filling":1}']],
        createBad: ['', '{"color":"#ff0000"}'],
        updateOk: [['{"icon":"heart"}', 'heart']], updateBad: ['{"color":"#ff0000"}', '{"icon":"x","extra":1}'],
      },
    },
    { field: 'fi', createOk: [['file-1', 'file-1']], createBad: [1], updateOk: [['file-2', 'file-2']], updateBad: [false] },
    { field: 'u', createOk: [['user-1', 'user-1']], createBad: [1], updateOk: [['user-2', 'user-2']], updateBad: [[]] },
    {
      field: 'r', createOk: [[first, first]], createBad: [String(first), 999_999_999, 0, 1.5],
      updateOk: [[first, first]], updateBad: [999_999_999, 'abc'],
    },
    // Dynamic choices are not in the value table: all open.
    { field: 'dc', open: { createOk: [[Number(t5), t5], [t6, t6]], createBad: ['x', -1], updateOk: [[t7, t7]], updateBad: [true] } },
    { field: 'dm', open: { createOk: [[[Number(t5), t6], [t5, t6]]], createBad: [t5, [Number(t5), t5]], updateOk: [[[t7], [t7]]], updateBad: [Number(t5)] } },
  ];
}

/** Every case, in field order: creates, then updates; accepted, then refused. */
export function valueCases(c: CaseContext): ValueCase[] {
  const out: ValueCase[] = [];
  for (const f of byField(c)) {
    for (const open of [false, true]) {
      const lists = open ? f.open ?? {} : f;
      for (const [sent, stored] of lists.createOk ?? []) out.push({ field: f.field, on: 'create', sent, stored, accepted: true, open });
      for (const sent of lists.createBad ?? []) out.push({ field: f.field, on: 'create', sent, accepted: false, open });
      for (const [sent, stored] of lists.updateOk ?? []) out.push({ field: f.field, on: 'update', sent, stored, accepted: true, open });
      for (const sent of lists.updateBad ?? []) out.push({ field: f.field, on: 'update', sent, accepted: false, open });
    }
  }
  return out;
}

/** `n ← "12" (update)`: a case as a report names it. */
export function caseLabel(c: ValueCase): string {
  return `${c.field} ← ${JSON.stringify(c.sent)} (${c.on})`;
}

/**
 * Whether a value read back is the value sent, by the description's meaning of the type: the
 * same instant for timestamps and appointment ends, an option by its id or its name, an icon as
 * the same object (a bare name is `{ icon }`), a color in any letter case. A single instant sent
 * for an appointment (an update shape the table allows) is only required to start the range.
 */
export function sameValue(fieldName: string, expected: unknown, actual: unknown, sent: unknown, c: CaseContext): boolean {
  switch (fieldName) {
    case 'ts':
      return typeof actual === 'string' && Date.parse(actual) === Date.parse(String(expected));
    case 'ap': {
      const got = appointmentEnds(actual);
      const want = appointmentEnds(expected);
      if (!got || !want) return false;
      return typeof sent === 'string' && sent.startsWith('[') ? got[0] === want[0] && got[1] === want[1] : got[0] === want[0];
    }
    case 'c':
      return optionMatches(c, 'c', expected, actual);
    case 'm':
      return Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length
        && expected.every((id) => actual.some((a) => optionMatches(c, 'm', id, a)));
    case 'ic':
      return isDeepEqualJson(iconObject(actual), iconObject(expected));
    case 'col':
      return typeof actual === 'string' && actual.toLowerCase() === String(expected).toLowerCase();
    default:
      return isDeepEqualJson(actual, expected);
  }
}

function appointmentEnds(value: unknown): [number, number] | undefined {
  const m = typeof value === 'string' ? /^\[([^,]+),([^)]+)\)$/.exec(value) : null;
  return m ? [Date.parse(m[1]!), Date.parse(m[2]!)] : undefined;
}

/** `actual` names the option whose id is `expectedId`, by id or by name. */
function optionMatches(c: CaseContext, fieldName: string, expectedId: unknown, actual: unknown): boolean {
  if (actual === expectedId) return true;
  const names = fieldName === 'c' ? ['open', 'closed', 'o1'] : ['red', 'green', 'blue'];
  return names.some((name) => c.option(fieldName, name) === expectedId && actual === name);
}

function iconObject(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null ? parsed : { icon: value };
  } catch {
    return { icon: value };
  }
}

function isDeepEqualJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}
