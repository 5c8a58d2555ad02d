import { parseTimestamp } from '../api/timestamp.ts';

/**
 * A date or timestamp Postgres prints in its year 1 BC (`0001-06-01 10:00:00+00 BC`) as ISO 8601's
 * year 0000, which the API allows and Postgres has no other way to hold; text without `BC` as it
 * is; undefined for an earlier year, which the API cannot take.
 */
export function withoutBc(text: string): string | undefined {
  if (!text.endsWith(' BC')) return text;
  return text.startsWith('0001-') ? `0000-${text.slice(5, -3)}` : undefined;
}

/** A date or timestamp of the API's form in year 0000 as Postgres takes it (its 1 BC). */
export function asBcWhenYearZero(text: string): string {
  return text.startsWith('0000-') ? `0001-${text.slice(5)} BC` : text;
}

/**
 * Parses a timestamp as SQL writes it, `YYYY-MM-DD HH:MM[:SS[.fff]]` with an optional zone
 * (`+00`, `+05:30`, `Z`): typed by hand into SQLite, or printed by Postgres (ISO DateStyle).
 * Without a zone it is taken as UTC. Unix milliseconds, or undefined when the text is not one.
 */
export function parseSqlTimestamp(text: string): number | undefined {
  const ad = withoutBc(text.trim());
  if (ad === undefined) return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(ad);
  if (!m) return undefined;
  const zone = m[3];
  if (zone === undefined || zone === 'Z' || /^[+-]00(:?00)?$/.test(zone)) return parseTimestamp(`${m[1]}T${m[2]}Z`);
  const ms = Date.parse(`${m[1]}T${m[2]}${zone.length === 3 ? `${zone}:00` : zone}`);
  return Number.isNaN(ms) ? undefined : ms;
}
