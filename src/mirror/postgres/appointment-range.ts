import type { AppointmentBounds } from '../../api/appointment.ts';
import { parseAppointment } from '../../api/appointment.ts';
import type { AppointmentStorage, ColumnConversion } from '../dialect.ts';
import { asBcWhenYearZero, parseSqlTimestamp } from '../sql-timestamp.ts';
import type { SqlNames } from '../sql-text.ts';
import { quoteIdent } from '../sql-text.ts';

/**
 * Appointments as `tstzrange`. The API's `[<start>,<end>)` is valid range input, except that
 * Postgres turns `[t,t)` into `empty` and loses `t`: a point (start = end, which the API allows)
 * is stored as `[t,t]`. Back to the API, the bounds' brackets are not kept (the API has
 * `[start,end)` only), an empty range is no appointment (null), and a range with an open or
 * infinite bound is not one the API can take (undefined: the push sends it as stored and the
 * upstream judges it).
 */

/** `[` or `(`, two bounds each quoted or bare (an open bound is empty), `]` or `)`: Postgres' range output. */
const RANGE_TEXT = /^[[(](?:"([^"]*)"|([^,"]*)),(?:"([^"]*)"|([^\])"]*))[\])]$/;

function boundOf(quoted: string | undefined, bare: string | undefined): number | undefined {
  const text = quoted ?? bare ?? '';
  return text === '' ? undefined : parseSqlTimestamp(text);
}

export const postgresAppointments: AppointmentStorage = {
  toSql: (start, end) => (start === end
    ? `[${asBcWhenYearZero(start)},${asBcWhenYearZero(end)}]`
    : `[${asBcWhenYearZero(start)},${asBcWhenYearZero(end)})`),
  fromSql(value): AppointmentBounds | null | undefined {
    if (typeof value !== 'string') return undefined;
    if (value === 'empty') return null;
    // Text in the API's form: values captured while the column was still text.
    const api = parseAppointment(value);
    if (api !== undefined) return api;
    const m = RANGE_TEXT.exec(value);
    if (!m) return undefined;
    const start = boundOf(m[1], m[2]);
    const end = boundOf(m[3], m[4]);
    if (start === undefined || end === undefined || end < start) return undefined;
    return { start, end };
  },
};

/** Converts the text of an older mirror's appointment column; text that is no appointment becomes NULL. */
const FROM_TEXT_FUNCTION = '_wsmirror_text_to_tstzrange';

/** Text appointment columns (before catalog layout 5) become `tstzrange`, values kept. */
export function convertColumnSql(names: SqlNames, c: ColumnConversion): string[] | null {
  if (c.from !== 'text' || c.to !== 'tstzrange') return null;
  const fn = names.qualify(FROM_TEXT_FUNCTION);
  return [
    `CREATE OR REPLACE FUNCTION ${fn}(value text) RETURNS tstzrange LANGUAGE plpgsql STABLE STRICT AS $convert$
     DECLARE
       bounds text[] := regexp_match(value, '^\\[([^,]+),([^,]+)\\)$');
     BEGIN
       IF bounds IS NOT NULL AND bounds[1]::timestamptz = bounds[2]::timestamptz THEN
         RETURN tstzrange(bounds[1]::timestamptz, bounds[2]::timestamptz, '[]');
       END IF;
       RETURN value::tstzrange;
     EXCEPTION WHEN others THEN
       RETURN NULL;
     END $convert$`,
    `ALTER TABLE ${names.qualify(c.sqlTable)} ALTER COLUMN ${quoteIdent(c.column)} TYPE tstzrange USING ${fn}(${quoteIdent(c.column)})`,
    `DROP FUNCTION ${fn}(text)`,
  ];
}
