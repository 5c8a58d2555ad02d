import { formatTimestamp, parseTimestamp } from './timestamp.ts';

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
