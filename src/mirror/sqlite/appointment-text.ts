import { parseAppointment } from '../../api/appointment.ts';
import type { AppointmentStorage } from '../dialect.ts';

/** SQLite has no range type: an appointment is the API's own text, `[<start>,<end>)`. */
export const sqliteAppointments: AppointmentStorage = {
  toSql: (start, end) => `[${start},${end})`,
  fromSql: (value) => (typeof value === 'string' ? parseAppointment(value) : undefined),
};
