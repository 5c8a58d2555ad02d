import { formatTimestamp, isCanonicalTimestamp, parseTimestamp } from './timestamp.ts';

/** An appointment as the service writes it: `[<start>,<end>)`, two UTC timestamps. */
const APPOINTMENT = /^\[([^,\[\])]+),([^,\[\])]+)\)$/;

/** Bounds of an appointment, in Unix milliseconds; start is never after end. */
export interface AppointmentBounds {
  start: number;
  end: number;
}

/**
 * Parses `[<start>,<end>)` (spec timestamps, start not after end), or returns undefined when the
 * text is not such an appointment.
 */
export function parseAppointment(text: string): AppointmentBounds | undefined {
  const m = APPOINTMENT.exec(text);
  const start = m ? parseTimestamp(m[1]!) : undefined;
  const end = m ? parseTimestamp(m[2]!) : undefined;
  if (start === undefined || end === undefined || end < start) return undefined;
  return { start, end };
}

/** The service's own form of an appointment: `[<start>,<end>)` with millisecond timestamps. */
export function formatAppointment(bounds: AppointmentBounds): string {
  return `[${formatTimestamp(bounds.start)},${formatTimestamp(bounds.end)})`;
}

/** Length of a timestamp in the service's own form, `2026-01-31T09:00:00.000Z`. */
const CANONICAL_LENGTH = 24;

/**
 * The bounds of an appointment as timestamps in the service's own form, or undefined when the
 * text is not an appointment. Reads return that form already: it is checked and kept as is,
 * without a trip through numbers and dates (the pull meets it once per value).
 */
export function appointmentBoundsText(text: string): { start: string; end: string } | undefined {
  if (text.length === 2 * CANONICAL_LENGTH + 3 && text[0] === '[' && text[CANONICAL_LENGTH + 1] === ',' && text.endsWith(')')) {
    const start = text.slice(1, CANONICAL_LENGTH + 1);
    const end = text.slice(CANONICAL_LENGTH + 2, -1);
    // Same-length ISO timestamps of years 0000-9999 compare in time order as text.
    if (isCanonicalTimestamp(start) && isCanonicalTimestamp(end) && start <= end) return { start, end };
  }
  const bounds = parseAppointment(text);
  return bounds === undefined ? undefined : { start: formatTimestamp(bounds.start), end: formatTimestamp(bounds.end) };
}
