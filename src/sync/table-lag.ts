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
 * `sync.maxLag`, plus `sync.fullScanEvery` for a full-scan table, whose lag climbs by that
 * much between two scans by design.
 */
export function lagBoundMs(mode: 'history' | 'fullscan', bounds: { maxLagMs: number; fullScanEveryMs: number }): number {
  return mode === 'fullscan' ? bounds.maxLagMs + bounds.fullScanEveryMs : bounds.maxLagMs;
}
