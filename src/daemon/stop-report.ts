/**
 * What a stop by SIGINT or SIGTERM leaves behind, in one sentence: the tables the interrupted
 * cycle finished, those it left (with how far a scan had got), and that the next run goes on
 * from what was committed.
 */
import type { CycleTally } from './cycle-observer.ts';
import { formatCount } from './units.ts';

const LISTED = 8;

function list(names: readonly string[]): string {
  return names.length <= LISTED ? names.join(', ') : `${names.slice(0, LISTED).join(', ')} and ${names.length - LISTED} more`;
}

export function describeStop(signal: string, tally: CycleTally): string {
  const total = tally.tables.length;
  const finished = tally.tables.filter((t) => tally.pulled.has(t));
  const left = tally.tables.filter((t) => !tally.pulled.has(t)).map((t) => {
    const rows = tally.rowsRead.get(t);
    return rows === undefined || rows === 0 ? t : `${t} (stopped after ${formatCount(rows)} rows read)`;
  });
  if (total === 0) return `stopped by ${signal} before the cycle reached the tables; the next run starts from the same place`;
  const done = finished.length === 0 ? 'no table finished' : `${finished.length} of ${total} tables finished (${list(finished)})`;
  const rest = left.length === 0 ? 'nothing left' : `left: ${list(left)}`;
  return `stopped by ${signal}: ${done}; ${rest}; the next run continues from what was committed`;
}
