import { parseTimestamp } from '../api/timestamp.ts';

/**
 * Parses a timestamp as SQL writes it, `YYYY-MM-DD HH:MM[:SS[.fff]]` with an optional zone
 * (`+00`, `+05:30`, `Z`): typed by hand into SQLite, or printed by Postgres (ISO DateStyle).
 * Without a zone it is taken as UTC. Unix milliseconds, or undefined when the text is not one.
 */
export function parseSqlTimestamp(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(text.trim());
  if (!m) return undefined;
  const zone = m[3];
  if (zone === undefined || zone === 'Z' || /^[+-]00(:?00)?$/.test(zone)) return parseTimestamp(`${m[1]}T${m[2]}Z`);
  const ms = Date.parse(`${m[1]}T${m[2]}${zone.length === 3 ? `${zone}:00` : zone}`);
  return Number.isNaN(ms) ? undefined : ms;
}
