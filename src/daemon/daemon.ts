/**
 * `wsmirror run` minus the engine: the scheduler driving an injected cycle, metrics and readiness
 * fed from its outcomes, the operations HTTP server, and signal handling (SIGTERM/SIGINT stop it,
 * SIGHUP is logged and ignored). The CLI builds
 * the engine, passes its cycle here and waits for `stopped`.
 */
import type { Config } from './config-types.ts';
import { startHttpServer } from './http-server.ts';
import type { HttpServer } from './http-server.ts';
import type { Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import { evaluateReadiness } from './readiness.ts';
import type { ReadinessReport } from './readiness.ts';
import { Scheduler } from './scheduler.ts';
import type { CycleFunction, CycleOutcome } from './scheduler.ts';
import { handleHangupSignal } from './hangup.ts';
import { handleShutdownSignals, type ShutdownSignal } from './shutdown.ts';

export interface DaemonOptions {
  config: Pick<Config, 'sync' | 'http'>;
  cycle: CycleFunction;
  logger: Logger;
  /** Shared with the engine and client, which report into it; a new one by default. */
  metrics?: Metrics;
  /** Hides secrets in `/readyz` bodies (pass the logger's redactor). */
  redact?: (text: string) => string;
  /** Install SIGTERM/SIGINT/SIGHUP handlers (default true; tests call `stop()` instead). */
  handleSignals?: boolean;
  /** Run the first cycle at once (default true). */
  runOnStart?: boolean;
  /** Whether a failed cycle's error ends the daemon (none does by default: the next tick tries again). */
  stopsOn?: (error: unknown) => boolean;
}

export interface Daemon {
  readonly scheduler: Scheduler;
  readonly metrics: Metrics;
  /** Null when `http.port` is 0. */
  readonly http: HttpServer | null;
  readiness(): ReadinessReport;
  /** Graceful stop (also what a signal triggers); idempotent. */
  stop(): Promise<void>;
  /** Resolves once a stop has completed: the CLI then exits 0. */
  readonly stopped: Promise<void>;
  /** The signal that stopped the daemon, if one did. */
  readonly stoppedBy: ShutdownSignal | undefined;
  /** The error of the cycle that stopped the daemon (see `stopsOn`), if one did. */
  readonly stoppedByError: unknown;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, logger } = options;
  const metrics = options.metrics ?? new Metrics();
  let failuresInARow = 0;
  let stoppedByError: unknown;
  const onCycleEnd = (outcome: CycleOutcome) => {
    metrics.observeCycle(outcome.result, outcome.durationMs, outcome.finishedAt.getTime());
    const fields = { result: outcome.result, durationMs: outcome.durationMs };
    if (outcome.result === 'failure') {
      failuresInARow++;
      // One line per failing cycle; the stack, rarely of use to an operator, only at debug.
      const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      logger.error({ ...fields, error: message, failuresInARow }, `sync cycle failed: ${message}`);
      logger.debug({ err: outcome.error }, 'sync cycle failure in detail');
      if (stoppedByError === undefined && options.stopsOn?.(outcome.error) === true) {
        stoppedByError = outcome.error;
        // Called before the scheduler arms the next cycle, so none is.
        void stop();
      }
    } else if (outcome.result === 'aborted') {
      logger.info(fields, 'sync cycle stopped early for shutdown');
    } else {
      if (failuresInARow > 0) logger.info({ ...fields, after: failuresInARow }, 'sync cycle succeeded again');
      else logger.debug(fields, 'sync cycle succeeded');
      failuresInARow = 0;
    }
  };
  const scheduler = new Scheduler({
    schedule: config.sync.schedule,
    cycle: options.cycle,
    runOnStart: options.runOnStart ?? true,
    onCycleEnd,
    logger,
  });
  const readiness = () =>
    evaluateReadiness({
      lastCycle: scheduler.lastOutcome,
      maxLag: metrics.maxLag({ maxLagMs: config.sync.maxLagMs, fullScanEveryMs: config.sync.fullScanEveryMs }),
      stopping: scheduler.stopping,
      runningSince: scheduler.runningSince,
    });
  const http = await startHttpServer(config.http, {
    metrics,
    readiness,
    logger,
    ...(options.redact ? { redact: options.redact } : {}),
  });
  if (http) logger.info({ url: http.url }, 'serving /healthz, /readyz and /metrics');

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  let removeSignalHandlers = () => {};
  const stop = () => {
    stopping ??= (async () => {
      await scheduler.stop();
      await http?.close();
      // Only now: a second signal during the stop must still reach the handler and force the exit.
      removeSignalHandlers();
      logger.info('stopped');
      resolveStopped();
    })();
    return stopping;
  };
  let stoppedBy: ShutdownSignal | undefined;
  if (options.handleSignals ?? true) {
    const removeHangupHandler = handleHangupSignal(logger);
    const removeShutdownHandlers = handleShutdownSignals({
      onSignal: (signal) => {
        stoppedBy = signal;
        return stop();
      },
      logger,
    });
    removeSignalHandlers = () => {
      removeShutdownHandlers();
      removeHangupHandler();
    };
  }

  scheduler.start();
  logger.info({ schedule: config.sync.schedule }, 'daemon started');
  return {
    scheduler, metrics, http, readiness, stop, stopped,
    get stoppedBy() {
      return stoppedBy;
    },
    get stoppedByError() {
      return stoppedByError;
    },
  };
}
