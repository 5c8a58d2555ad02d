/**
 * Lag, defined once for `wsmirror status`, `/metrics` (`wsmirror_table_lag_seconds`) and
 * `/readyz`: how old the upstream state a table holds is — now minus the start of its last
 * successful pull (for a history table the change poll, for a backfill its catch-up poll, for a
 * full-scan table the scan, however long ago a resumed scan began). Every change committed
 * upstream before that moment is in the mirror. It grows between pulls, so a full-scan table's
 * lag climbs to about `sync.fullScanEvery` between two scans, and keeps climbing while pulls fail.
 */
export function tableLagMs(currentAsOf: Date | string | number | null, now: number = Date.now()): number | null {
  if (currentAsOf === null) return null;
  const at = currentAsOf instanceof Date ? currentAsOf.getTime() : typeof currentAsOf === 'string' ? Date.parse(currentAsOf) : currentAsOf;
  return Number.isNaN(at) ? null : Math.max(0, now - at);
}

/**
 * The lag beyond which a table needs attention (`wsmirror status` exit code 1, `/readyz`):
 * `sync.maxLag`, plus for a full-scan table what its lag climbs by between two scans by design:
 * `sync.fullScanEvery` (the next scan is due that long after the last one ended) and the length
 * of its last scan (`lastScanMs`: lag counts from a scan's start, and a scan holds the rows it
 * read only once it ends). A scan as long as the last keeps a healthy table within its bound.
 */
export function lagBoundMs(mode: 'history' | 'fullscan', bounds: { maxLagMs: number; fullScanEveryMs: number }, lastScanMs = 0): number {
  return mode === 'fullscan' ? bounds.maxLagMs + bounds.fullScanEveryMs + lastScanMs : bounds.maxLagMs;
}

/**
 * How long a table's last pull took: from the upstream state it holds (its start) to its end
 * (`last_pull_at`); for a full-scan table the length of its last scan (a resumed one counted from
 * its first start). 0 when either is unknown.
 */
export function lastPullMs(currentAsOf: Date | string | number | null, lastPullAt: Date | string | number | null): number {
  const ms = (at: Date | string | number | null) => (at === null ? Number.NaN : at instanceof Date ? at.getTime() : typeof at === 'string' ? Date.parse(at) : at);
  const length = ms(lastPullAt) - ms(currentAsOf);
  return Number.isFinite(length) ? Math.max(0, length) : 0;
}
