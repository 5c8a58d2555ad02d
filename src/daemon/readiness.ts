/**
 * Readiness (`/readyz`): the mirror may be relied on when the last cycle succeeded and no table
 * lags upstream by more than `sync.maxLag`. A pure function, so the rule is tested on its own.
 */
import type { TableLag } from './metrics.ts';
import type { CycleOutcome } from './scheduler.ts';

/** How far behind upstream a table may be before `/readyz` fails, unless configured. */
export const DEFAULT_MAX_LAG_MS = 5 * 60_000;

export interface ReadinessInput {
  lastCycle: CycleOutcome | undefined;
  /**
   * The table furthest beyond its own bound (Metrics.maxLag: a full-scan table's includes its
   * scan interval), or null when none has been pulled.
   */
  maxLag: TableLag | null;
  stopping?: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  /** Why not ready; absent when ready. */
  reason?: string;
  lastCycle?: { result: string; startedAt: string; finishedAt: string; durationMs: number; error?: string };
  maxLag?: TableLag;
}

export function evaluateReadiness(input: ReadinessInput): ReadinessReport {
  const report: ReadinessReport = { ready: false };
  const last = input.lastCycle;
  if (last) {
    report.lastCycle = {
      result: last.result,
      startedAt: last.startedAt.toISOString(),
      finishedAt: last.finishedAt.toISOString(),
      durationMs: last.durationMs,
      ...(last.error !== undefined ? { error: errorMessage(last.error) } : {}),
    };
  }
  const lag = input.maxLag;
  if (lag) report.maxLag = { table: lag.table, seconds: round(lag.seconds), boundSeconds: lag.boundSeconds };

  if (input.stopping) report.reason = 'the daemon is stopping';
  else if (!last) report.reason = 'no cycle has finished yet';
  else if (last.result !== 'success') report.reason = `the last cycle ${last.result === 'aborted' ? 'was aborted' : `failed: ${errorMessage(last.error)}`}`;
  else if (lag && lag.seconds > lag.boundSeconds) {
    report.reason = `table ${lag.table} lags upstream by ${round(lag.seconds)} s (bound ${lag.boundSeconds} s)`;
  } else report.ready = true;
  return report;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
