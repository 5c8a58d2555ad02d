/**
 * The leaves of the configuration schema: each accepts what YAML or an environment variable can
 * hold (`30s`, `"30s"`, `30`) and names the bad value in its message. The rules themselves (what
 * a base URL, a key, a mirror URL may be) belong to the modules they configure; these only adapt
 * them to zod.
 */
import * as z from 'zod';
import { redactUrlPasswords } from '../api/secret-redaction.ts';
import { parseDuration, parseSize } from './units.ts';

/** Renders a bad value for a message, hiding any password inside a URL. */
export function showValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const hidden = redactUrlPasswords(value);
    return JSON.stringify(hidden.length > 80 ? `${hidden.slice(0, 77)}...` : hidden);
  }
  return String(value);
}

/** A value read by `parse`; undefined from it is an error saying the value is not `expected`. */
export function leaf<T>(expected: string | ((value: unknown) => string), parse: (value: unknown) => T | undefined) {
  return z.unknown().transform((value, ctx): T => {
    const out = parse(value);
    if (out === undefined) {
      const message = typeof expected === 'function' ? expected(value) : `${showValue(value)} is not ${expected}`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return out;
  });
}

/**
 * The longest duration a setting takes. None means more than a year, and a wait far longer
 * reaches past the dates JavaScript can hold (`sync.createSettle: 999999999d` made every push
 * fail with "Invalid time value").
 */
const MAX_DURATION_MS = 365 * 86_400_000;

export function duration(options: { positive: boolean }) {
  const what = options.positive ? 'a duration above zero such as 30s' : 'a duration such as 10s';
  const tooLong = (value: unknown) => (parseDuration(value) ?? 0) > MAX_DURATION_MS;
  return leaf((value) => (tooLong(value) ? `${showValue(value)} is longer than a year, the longest duration wsmirror takes` : `${showValue(value)} is not ${what}`), (value) => {
    const ms = parseDuration(value);
    return ms === undefined || (options.positive && ms <= 0) || ms > MAX_DURATION_MS ? undefined : ms;
  });
}

export function integer(range: { readonly min: number; readonly max: number }) {
  const { min, max } = range;
  return leaf(`an integer from ${min} to ${max}`, (value) => {
    const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  });
}

export const share = leaf('a share from 0 to 1 such as 0.5 or 50%', (value) => {
  let n: unknown = value;
  if (typeof value === 'string') {
    const text = value.trim();
    n = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : text === '' ? Number.NaN : Number(text);
  }
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
});

export function size(minBytes: number) {
  return leaf(`a size of at least ${minBytes} bytes such as 64MB`, (value) => {
    const bytes = parseSize(value);
    return bytes !== undefined && bytes >= minBytes ? bytes : undefined;
  });
}

export function nonEmptyString(what: string) {
  return leaf(what, (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined));
}
