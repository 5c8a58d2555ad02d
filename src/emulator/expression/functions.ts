import { ConversionFailure, checkedText, toNumber, toText } from './conversions.ts';
import { fits, isListType, isRecordType, isRecordValue, typeName, type Value, type ValueType } from './scope.ts';

/**
 * The functions expressions may call. Each says how many arguments it takes, the type it returns
 * for the argument types the checker found (or which argument is wrong), and how it runs. The
 * table is the single source of docs/expressions.md's function list (a test keeps them equal).
 */

export interface FunctionEnvironment {
  /** Emulator clock, in milliseconds. */
  now(): number;
  /** Role of the API key the request came with. */
  userRole(): string;
}

export type ArgumentProblem = { readonly argument: number; readonly message: string };

export interface FunctionDefinition {
  readonly name: string;
  /** As written in docs/expressions.md and in arity errors: `round(x, digits?)`. */
  readonly signature: string;
  readonly summary: string;
  readonly minArgs: number;
  readonly maxArgs: number;
  check(args: readonly ValueType[]): ValueType | ArgumentProblem;
  run(args: readonly Value[], env: FunctionEnvironment): Value;
}

// ---- argument checks ---------------------------------------------------------------------------

const NUMBER_LIST: ValueType = { list: 'number' };
const ANY_LIST: ValueType = { list: 'any' };

/** The first argument whose type does not fit, as a problem; or undefined. */
function wrongArgument(args: readonly ValueType[], wanted: (i: number) => ValueType | readonly ValueType[]): ArgumentProblem | undefined {
  for (let i = 0; i < args.length; i++) {
    const w = wanted(i);
    const options = Array.isArray(w) ? (w as readonly ValueType[]) : [w as ValueType];
    if (!options.some((o) => fits(args[i]!, o))) {
      return { argument: i, message: `expects ${options.map(typeName).join(' or ')}, not ${typeName(args[i]!)}` };
    }
  }
  return undefined;
}

function typed(wanted: (i: number) => ValueType | readonly ValueType[], returns: ValueType | ((args: readonly ValueType[]) => ValueType)) {
  return (args: readonly ValueType[]): ValueType | ArgumentProblem =>
    wrongArgument(args, wanted) ?? (typeof returns === 'function' ? returns(args) : returns);
}

// ---- runtime helpers ----------------------------------------------------------------------------

function num(value: Value, what: string): number | null {
  if (value === null) return null;
  if (typeof value !== 'number') throw new ConversionFailure(`${what} must be a number, not ${JSON.stringify(value)}`);
  return value;
}

function list(value: Value): readonly Value[] {
  if (value === null) return [];
  if (Array.isArray(value)) return value as readonly Value[];
  return [value];
}

/** The numbers of a list argument or of several arguments; nulls are skipped. */
function numbers(args: readonly Value[]): number[] {
  const items = args.length === 1 ? list(args[0]!) : args;
  const out: number[] = [];
  for (const item of items) {
    const n = num(item, 'every item');
    if (n !== null) out.push(n);
  }
  return out;
}

function text(value: Value, what: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw new ConversionFailure(`${what} must be a text, not ${JSON.stringify(value)}`);
  return value;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const one = (t: ValueType | readonly ValueType[]) => () => t;

// ---- the functions ------------------------------------------------------------------------------

const DEFINITIONS: readonly FunctionDefinition[] = [
  {
    name: 'today', signature: 'today()', summary: 'the current UTC date as `YYYY-MM-DD` (the emulator clock)',
    minArgs: 0, maxArgs: 0, check: () => 'text', run: (_a, env) => isoDay(env.now()),
  },
  {
    name: 'now', signature: 'now()', summary: 'the current time as an ISO 8601 UTC timestamp with milliseconds',
    minArgs: 0, maxArgs: 0, check: () => 'text', run: (_a, env) => new Date(env.now()).toISOString(),
  },
  {
    name: 'userRole', signature: 'userRole()', summary: 'the role of the API key of the request: `admin`, `editor` or another role',
    minArgs: 0, maxArgs: 0, check: () => 'text', run: (_a, env) => env.userRole(),
  },
  {
    name: 'id', signature: 'id(record)', summary: 'the id of a record (`id(this)`); null for a record not created yet',
    minArgs: 1, maxArgs: 1,
    check: ([t]) => (t === 'any' || t === 'null' || isRecordType(t!) ? 'number' : { argument: 0, message: `expects a record, not ${typeName(t!)}` }),
    run: ([v]) => (v !== undefined && isRecordValue(v) ? (v.id ?? null) : null),
  },
  {
    name: 'concat', signature: 'concat(value, …)', summary: 'the values as text, joined; lists join their items with ", "; null is ""',
    minArgs: 1, maxArgs: 100, check: () => 'text', run: (args) => checkedText(args.map(toText).join('')),
  },
  {
    name: 'text', signature: 'text(value)', summary: 'a value as text (null is "", true is "true", a record is its id)',
    minArgs: 1, maxArgs: 1, check: () => 'text', run: ([v]) => toText(v!),
  },
  {
    name: 'number', signature: 'number(value)', summary: 'a number from a number, a numeric text or a boolean (1 or 0); otherwise null',
    minArgs: 1, maxArgs: 1, check: typed(one(['number', 'text', 'boolean']), 'number'), run: ([v]) => toNumber(v!),
  },
  {
    name: 'upper', signature: 'upper(text)', summary: 'the text in upper case',
    minArgs: 1, maxArgs: 1, check: typed(one('text'), 'text'), run: ([v]) => text(v!, 'upper(text)')?.toUpperCase() ?? null,
  },
  {
    name: 'lower', signature: 'lower(text)', summary: 'the text in lower case',
    minArgs: 1, maxArgs: 1, check: typed(one('text'), 'text'), run: ([v]) => text(v!, 'lower(text)')?.toLowerCase() ?? null,
  },
  {
    name: 'trim', signature: 'trim(text)', summary: 'the text without leading and trailing white space',
    minArgs: 1, maxArgs: 1, check: typed(one('text'), 'text'), run: ([v]) => text(v!, 'trim(text)')?.trim() ?? null,
  },
  {
    name: 'length', signature: 'length(text or list)', summary: 'the number of characters of a text or of items of a list; 0 for null',
    minArgs: 1, maxArgs: 1, check: typed(one(['text', ANY_LIST]), 'number'),
    run: ([v]) => (typeof v === 'string' ? v.length : list(v!).length),
  },
  {
    name: 'contains', signature: 'contains(text or list, value)', summary: 'whether the text holds the other text, or the list an item equal to the value',
    minArgs: 2, maxArgs: 2, check: typed((i) => (i === 0 ? ['text', ANY_LIST] : 'any'), 'boolean'),
    run: ([haystack, needle]) => {
      if (typeof haystack === 'string') return haystack.includes(toText(needle!));
      return list(haystack!).some((item) => toText(item) === toText(needle!) && typeof item === typeof needle);
    },
  },
  {
    name: 'round', signature: 'round(number, digits?)', summary: 'the number rounded half away from zero to `digits` decimals (default 0, at most 15)',
    minArgs: 1, maxArgs: 2, check: typed(one('number'), 'number'),
    run: ([v, d]) => {
      const x = num(v!, 'round(number)');
      const digits = d === undefined || d === null ? 0 : num(d, 'round(…, digits)')!;
      if (!Number.isInteger(digits) || digits < 0 || digits > 15) throw new ConversionFailure('round(…, digits) takes a whole number of digits from 0 to 15');
      if (x === null) return null;
      const f = 10 ** digits;
      return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
    },
  },
  {
    name: 'floor', signature: 'floor(number)', summary: 'the largest whole number not above it',
    minArgs: 1, maxArgs: 1, check: typed(one('number'), 'number'), run: ([v]) => { const x = num(v!, 'floor(number)'); return x === null ? null : Math.floor(x); },
  },
  {
    name: 'ceil', signature: 'ceil(number)', summary: 'the smallest whole number not below it',
    minArgs: 1, maxArgs: 1, check: typed(one('number'), 'number'), run: ([v]) => { const x = num(v!, 'ceil(number)'); return x === null ? null : Math.ceil(x); },
  },
  {
    name: 'abs', signature: 'abs(number)', summary: 'the absolute value',
    minArgs: 1, maxArgs: 1, check: typed(one('number'), 'number'), run: ([v]) => { const x = num(v!, 'abs(number)'); return x === null ? null : Math.abs(x); },
  },
  {
    name: 'min', signature: 'min(list) or min(number, …)', summary: 'the smallest number (nulls skipped); null when there is none',
    minArgs: 1, maxArgs: 100, check: typed(one(['number', NUMBER_LIST]), 'number'),
    run: (args) => numbers(args).reduce<number | null>((m, n) => (m === null || n < m ? n : m), null),
  },
  {
    name: 'max', signature: 'max(list) or max(number, …)', summary: 'the largest number (nulls skipped); null when there is none',
    minArgs: 1, maxArgs: 100, check: typed(one(['number', NUMBER_LIST]), 'number'),
    run: (args) => numbers(args).reduce<number | null>((m, n) => (m === null || n > m ? n : m), null),
  },
  {
    name: 'sum', signature: 'sum(list) or sum(number, …)', summary: 'the total of the numbers (nulls skipped); 0 for none',
    minArgs: 1, maxArgs: 100, check: typed(one(['number', NUMBER_LIST]), 'number'),
    run: (args) => numbers(args).reduce((a, b) => a + b, 0),
  },
  {
    name: 'avg', signature: 'avg(list) or avg(number, …)', summary: 'the mean of the numbers (nulls skipped); null for none',
    minArgs: 1, maxArgs: 100, check: typed(one(['number', NUMBER_LIST]), 'number'),
    run: (args) => { const ns = numbers(args); return ns.length === 0 ? null : ns.reduce((a, b) => a + b, 0) / ns.length; },
  },
  {
    name: 'count', signature: 'count(list)', summary: 'the number of items of the list that are not null',
    minArgs: 1, maxArgs: 1, check: typed(one(ANY_LIST), 'number'), run: ([v]) => list(v!).filter((x) => x !== null).length,
  },
  {
    name: 'first', signature: 'first(list)', summary: 'the first item of the list; null when it is empty',
    minArgs: 1, maxArgs: 1, check: typed(one(ANY_LIST), ([t]) => (t && isListType(t) ? t.list : 'any')), run: ([v]) => list(v!)[0] ?? null,
  },
  {
    name: 'last', signature: 'last(list)', summary: 'the last item of the list; null when it is empty',
    minArgs: 1, maxArgs: 1, check: typed(one(ANY_LIST), ([t]) => (t && isListType(t) ? t.list : 'any')), run: ([v]) => list(v!).at(-1) ?? null,
  },
  {
    name: 'isEmpty', signature: 'isEmpty(value)', summary: 'whether the value is null, "" or an empty list',
    minArgs: 1, maxArgs: 1, check: () => 'boolean', run: ([v]) => v === null || v === '' || (Array.isArray(v) && v.length === 0),
  },
  {
    name: 'coalesce', signature: 'coalesce(value, …)', summary: 'the first argument that is not null',
    minArgs: 1, maxArgs: 100, check: (args) => args.find((t) => t !== 'null') ?? 'null', run: (args) => args.find((v) => v !== null) ?? null,
  },
];

export const FUNCTIONS: ReadonlyMap<string, FunctionDefinition> = new Map(DEFINITIONS.map((d) => [d.name, d]));
