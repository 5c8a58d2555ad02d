import { parseAppointment, type AppointmentBounds } from '../../api/appointment.ts';
import { parseTimestamp } from '../../api/timestamp.ts';
import type { AppointmentStorage } from '../dialect.ts';
import { parseSqlTimestamp } from '../sql-timestamp.ts';

const BOUNDS = /^\s*\[\s*([^,]+?)\s*,\s*([^,]+?)\s*\)\s*$/;

/**
 * An appointment as stored: the API's own text, or bounds written in SQL with an offset or a
 * space (`[2026-03-01 09:00:00+02:00,…)`), as a timestamp column takes them.
 */
function readAppointment(text: string): AppointmentBounds | undefined {
  const own = parseAppointment(text);
  if (own !== undefined) return own;
  const m = BOUNDS.exec(text);
  if (!m) return undefined;
  const start = parseTimestamp(m[1]!) ?? parseSqlTimestamp(m[1]!);
  const end = parseTimestamp(m[2]!) ?? parseSqlTimestamp(m[2]!);
  return start === undefined || end === undefined || end < start ? undefined : { start, end };
}

/** SQLite has no range type: an appointment is the API's own text, `[<start>,<end>)`. */
export const sqliteAppointments: AppointmentStorage = {
  toSql: (start, end) => `[${start},${end})`,
  fromSql: (value) => (typeof value === 'string' ? readAppointment(value) : undefined),
};
