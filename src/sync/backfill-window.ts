import type { KnownRecordChange } from '../client/index.ts';
import type { PulledTable, SyncContext } from './sync-context.ts';

/**
 * Changes a backfill's scan is known to include, so the catch-up after it need not read their
 * records again.
 *
 * A backfill takes its cursor before the scan, a lookback before upstream's clock, and after the
 * scan polls the changes from there: a change committed late (visible only after its changedAt)
 * must not be lost. That poll also brings every change the scan already read, and for a table
 * whose rows changed within the lookback (a fresh import, say) it would read the whole table a
 * second time. But a change already visible before the scan began was committed before the scan
 * read its record, so the scan read that record as it was after it. This reads the window up to
 * the cursor's `asOf` before the scan and remembers each change in it; the catch-up skips exactly
 * those (same record, same time, same kind) and reads every other one, late commits included.
 * Upstream's clock is never compared with this machine's.
 */
export type SeenChanges = ReadonlySet<string>;

/** At most this many changes are remembered (a few MB); changes past it are simply read again. */
const MAX_REMEMBERED = 50_000;

export function changeKey(change: Pick<KnownRecordChange, 'id' | 'changedAt' | 'changeType'>): string {
  return `${change.id} ${change.changedAt} ${change.changeType}`;
}

/** The changes of the window [since, asOf] visible now: to be taken before the scan starts. */
export async function changesBeforeScan(ctx: SyncContext, table: PulledTable, since: string, asOf: string): Promise<SeenChanges> {
  const seen = new Set<string>();
  const poll = ctx.client.pollRecordChanges(table.moduleName, table.tableName, {
    since, asOf, pageSize: ctx.options.pageSize, ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  for await (const changes of poll) {
    for (const change of changes) {
      if (seen.size >= MAX_REMEMBERED) return seen;
      seen.add(changeKey(change));
    }
  }
  return seen;
}
