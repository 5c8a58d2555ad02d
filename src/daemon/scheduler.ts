/**
 * Runs the sync cycle on the configured schedule, one at a time. The next start is computed only
 * when a cycle ends, so a slow cycle delays the next one instead of stacking runs:
 * - interval: the next cycle starts `everyMs` after the previous one started, or at once if the
 *   previous one took longer than that (missed ticks are not replayed);
 * - cron: the next matching time after the previous cycle ended (croner computes it).
 * `stop()` aborts the signal given to the running cycle — the cycle is expected to commit its open
 * transaction and return at the next safe point — and resolves once it has returned.
 */
import { Cron } from 'croner';
import type { Schedule } from './schedule.ts';
import type { Logger } from './logger.ts';
import type { CycleResult } from './metrics.ts';

export interface CycleOutcome {
  readonly result: CycleResult;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly durationMs: number;
  /** The error of a failed (or aborted) cycle. */
  readonly error?: unknown;
}

/** One cycle. The signal aborts when the daemon is asked to stop. */
export type CycleFunction = (signal: AbortSignal) => Promise<unknown> | unknown;

export interface SchedulerOptions {
  schedule: Schedule;
  cycle: CycleFunction;
  /** Start the first cycle at once (default) rather than at the first scheduled time. */
  runOnStart?: boolean;
  /** Called after each cycle, before the next is scheduled: metrics, logs, readiness. */
  onCycleEnd?: (outcome: CycleOutcome) => void;
  logger?: Pick<Logger, 'error'>;
}

// setTimeout fires at once for delays above 2^31 - 1 ms; longer waits are taken in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #cron: Cron | undefined;
  #timer: NodeJS.Timeout | undefined;
  #nextRunAt: number | null = null;
  #running: Promise<void> | undefined;
  #controller: AbortController | undefined;
  #started = false;
  #stopping: Promise<void> | undefined;
  #lastOutcome: CycleOutcome | undefined;
  #lastSuccess: CycleOutcome | undefined;
  #runningSince: Date | undefined;
  #cycles = 0;

  constructor(options: SchedulerOptions) {
    this.#options = options;
    // Throws on a bad expression; loadConfig has already checked it.
    this.#cron = options.schedule.kind === 'cron' ? new Cron(options.schedule.expression) : undefined;
  }

  start(): void {
    if (this.#started) throw new Error('the scheduler was already started');
    this.#started = true;
    const now = Date.now();
    if (this.#options.runOnStart ?? true) this.#arm(now);
    else this.#arm(this.#firstRun(now));
  }

  /** Stops scheduling; resolves when the running cycle, if any, has returned. Idempotent. */
  stop(): Promise<void> {
    if (this.#stopping === undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#nextRunAt = null;
      this.#controller?.abort(new Error('wsmirror is stopping'));
      this.#stopping = this.#running ?? Promise.resolve();
    }
    return this.#stopping;
  }

  get lastOutcome(): CycleOutcome | undefined {
    return this.#lastOutcome;
  }

  get lastSuccess(): CycleOutcome | undefined {
    return this.#lastSuccess;
  }

  /** True while a cycle runs. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** When the cycle running now began; undefined between cycles. */
  get runningSince(): Date | undefined {
    return this.#runningSince;
  }

  get stopping(): boolean {
    return this.#stopping !== undefined;
  }

  /** When the next cycle is due, or null while one runs, after stop, or when cron never fires again. */
  get nextRunAt(): Date | null {
    return this.#nextRunAt === null ? null : new Date(this.#nextRunAt);
  }

  /** Cycles finished so far. */
  get cycleCount(): number {
    return this.#cycles;
  }

  /** When the cycle after one that ran from `startedAt` to `finishedAt` starts; null when never. */
  nextRunAfter(startedAt: Date, finishedAt: Date): Date | null {
    const at = this.#nextRun(startedAt.getTime(), finishedAt.getTime());
    return at === null ? null : new Date(at);
  }

  #firstRun(now: number): number | null {
    const schedule = this.#options.schedule;
    if (schedule.kind === 'interval') return now + schedule.everyMs;
    return this.#cron?.nextRun(new Date(now))?.getTime() ?? null;
  }

  #nextRun(startedAt: number, finishedAt: number): number | null {
    const schedule = this.#options.schedule;
    if (schedule.kind === 'interval') return Math.max(startedAt + schedule.everyMs, finishedAt);
    return this.#cron?.nextRun(new Date(finishedAt))?.getTime() ?? null;
  }

  #arm(at: number | null): void {
    this.#nextRunAt = this.#stopping === undefined ? at : null;
    if (this.#nextRunAt === null || at === null) return;
    const delay = Math.max(0, at - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (at - Date.now() > 0) this.#arm(at);
      else this.#run();
    }, Math.min(delay, MAX_TIMER_MS));
  }

  #run(): void {
    if (this.#stopping !== undefined) return;
    this.#nextRunAt = null;
    const controller = new AbortController();
    this.#controller = controller;
    const startedAt = Date.now();
    this.#runningSince = new Date(startedAt);
    this.#running = (async () => {
      let result: CycleResult = 'success';
      let error: unknown;
      try {
        await this.#options.cycle(controller.signal);
      } catch (caught) {
        error = caught;
        result = controller.signal.aborted ? 'aborted' : 'failure';
      }
      const finishedAt = Date.now();
      const outcome: CycleOutcome = {
        result,
        startedAt: new Date(startedAt),
        finishedAt: new Date(finishedAt),
        durationMs: finishedAt - startedAt,
        ...(error !== undefined ? { error } : {}),
      };
      this.#cycles++;
      this.#lastOutcome = outcome;
      if (result === 'success') this.#lastSuccess = outcome;
      this.#controller = undefined;
      this.#running = undefined;
      this.#runningSince = undefined;
      try {
        this.#options.onCycleEnd?.(outcome);
      } catch (hookError) {
        this.#options.logger?.error({ err: hookError }, 'cycle end hook failed');
      }
      this.#arm(this.#nextRun(startedAt, finishedAt));
    })();
  }
}
