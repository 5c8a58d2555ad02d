/**
 * When `wsmirror run` starts a cycle: every so often (`30s`), or at the times of a cron
 * expression (`*\/5 * * * *`). The scheduler runs it; the configuration reads it with this rule.
 */
import { Cron } from 'croner';
import { showValue } from './config-values.ts';
import { looksLikeDuration, parseDuration } from './units.ts';

export type Schedule =
  | { readonly kind: 'interval'; readonly everyMs: number }
  | { readonly kind: 'cron'; readonly expression: string };

export const DEFAULT_SCHEDULE: Schedule = Object.freeze({ kind: 'interval', everyMs: 30_000 });

const SCHEDULE_EXPECTED = 'a cron expression such as "*/5 * * * *" or an interval such as 30s';

/** Reads `30s` (or a bare number of seconds) as an interval, anything else as a cron expression. */
export function parseSchedule(value: unknown): { schedule: Schedule } | { error: string } {
  if (typeof value === 'number' || (typeof value === 'string' && looksLikeDuration(value))) {
    const everyMs = parseDuration(value);
    if (everyMs === undefined || everyMs <= 0) return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED}` };
    return { schedule: { kind: 'interval', everyMs } };
  }
  if (typeof value !== 'string' || value.trim() === '') return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED}` };
  const expression = value.trim().replace(/\s+/g, ' ');
  let cron: Cron;
  try {
    cron = new Cron(expression);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED} (${why})` };
  }
  if (cron.nextRun() === null) return { error: `${showValue(value)} never fires` };
  return { schedule: { kind: 'cron', expression } };
}
