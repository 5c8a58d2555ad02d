/**
 * Readiness (`/readyz`): the mirror may be relied on when the last cycle succeeded and no table
 * lags upstream by more than `sync.maxLag`. A pure function, so the rule is tested on its own.
 *
 * A cycle still running is judged by the lag alone, not by how long it has run: lag keeps growing
 * while it runs (a table holds what its last finished pull read), so a cycle stuck for longer than
 * `sync.maxLag` turns `/readyz` 503 through the tables it has not pulled yet, while a long full
 * scan stays within its table's bound, which allows for the scan's length. The body says since
 * when a cycle runs, for whoever looks into a cycle taking long.
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
  /** When the cycle running now began; absent between cycles. */
  runningSince?: Date | undefined;
  /** Milliseconds since the epoch; tests move time. */
  now?: number;
}

export interface ReadinessReport {
  ready: boolean;
  /** Why not ready; absent when ready. */
  reason?: string;
  lastCycle?: { result: string; startedAt: string; finishedAt: string; durationMs: number; error?: string };
  /** The cycle running now: when it began and for how many seconds it has run. */
  runningCycle?: { startedAt: string; seconds: number };
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
  if (input.runningSince) {
    const seconds = ((input.now ?? Date.now()) - input.runningSince.getTime()) / 1000;
    report.runningCycle = { startedAt: input.runningSince.toISOString(), seconds: round(Math.max(0, seconds)) };
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
