/**
 * Readiness (`/readyz`): the mirror may be relied on when the last cycle succeeded and no table
 * lags upstream by more than `sync.maxLag`. A pure function, so the rule is tested on its own.
 */
import type { CycleOutcome } from './scheduler.ts';

/** How far behind upstream a table may be before `/readyz` fails, unless configured. */
export const DEFAULT_MAX_LAG_MS = 5 * 60_000;

export interface ReadinessInput {
  lastCycle: CycleOutcome | undefined;
  /**
   * The most lagging table (Metrics.maxLag(bounds)), with its own bound when known (a full-scan
   * table's includes its scan interval), or null when none has been pulled.
   */
  maxLag: { table: string; seconds: number; boundSeconds?: number } | null;
  maxLagMs: number;
  stopping?: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  /** Why not ready; absent when ready. */
  reason?: string;
  lastCycle?: { result: string; startedAt: string; finishedAt: string; durationMs: number; error?: string };
  maxLag?: { table: string; seconds: number; boundSeconds: number };
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
  const boundSeconds = input.maxLag?.boundSeconds ?? input.maxLagMs / 1000;
  if (input.maxLag) report.maxLag = { table: input.maxLag.table, seconds: round(input.maxLag.seconds), boundSeconds };

  if (input.stopping) report.reason = 'the daemon is stopping';
  else if (!last) report.reason = 'no cycle has finished yet';
  else if (last.result !== 'success') report.reason = `the last cycle ${last.result === 'aborted' ? 'was aborted' : `failed: ${errorMessage(last.error)}`}`;
  else if (input.maxLag && input.maxLag.seconds > boundSeconds) {
    report.reason = `table ${input.maxLag.table} lags upstream by ${round(input.maxLag.seconds)} s (bound ${boundSeconds} s)`;
  } else report.ready = true;
  return report;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
