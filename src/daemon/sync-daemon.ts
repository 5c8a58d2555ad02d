/**
 * `wsmirror run` as one call: a sync cycle on every tick of the schedule, the operations HTTP
 * server fed by it, until SIGTERM or SIGINT. `demo --keep-running` runs the same loop over the
 * cycle it opened itself.
 */
import { MirrorLostError, SyncLockLostError, WsmirrorError } from '../errors.ts';
import type { CycleReport } from '../sync/index.ts';
import type { Config } from './config-types.ts';
import { startDaemon } from './daemon.ts';
import { createRedactor } from '../api/secret-redaction.ts';
import { displayBaseUrl } from '../client/base-url.ts';
import { displayMirrorUrl } from '../mirror/mirror-url.ts';
import { sqliteWalBytes } from '../mirror/sqlite/wal-size.ts';
import { mirrorUrlOf } from './configured-mirror.ts';
import type { Logger } from './logger.ts';
import { Metrics } from './metrics.ts';
import type { Scheduler } from './scheduler.ts';
import { describeStop } from './stop-report.ts';
import { openSyncCycle, type SyncCycle } from './sync-cycle.ts';

export interface SyncDaemonOptions {
  logger: Logger;
  /** A cycle the caller opened (and closes); by default one is opened here, with progress. */
  cycle?: { cycle: SyncCycle; metrics: Metrics };
  /** Run the first cycle at once (default true). */
  runOnStart?: boolean;
  /** Told each successful cycle's report. */
  onCycle?: (report: CycleReport) => Promise<void> | void;
  /** Told what a stop by signal left behind (the log has it too). */
  onStopped?: (message: string) => void;
}

/** Resolves once the daemon has stopped and everything it opened is closed. */
export async function runSyncDaemon(config: Config, options: SyncDaemonOptions): Promise<void> {
  const { logger } = options;
  const metrics = options.cycle?.metrics ?? new Metrics();
  const { mirror } = config;
  if (mirror.dialect === 'sqlite' && mirror.path !== ':memory:') metrics.watchSqliteWal(() => sqliteWalBytes(mirror.path));
  // Opened by the first cycle that can: a mirror or upstream not reachable yet at start is a
  // failed cycle like any later one, which the next cycle tries again.
  let cycle = options.cycle?.cycle;
  // The sync lock lost to another process (an operator's sync took it while the daemon's
  // connection was down) passes too: waited out on a cycle opened here (a caller's stops).
  const waitedOut = (error: unknown) => error instanceof SyncLockLostError && options.cycle === undefined;
  try {
    logger.info({ mirror: displayMirrorUrl(mirrorUrlOf(config)), upstream: displayBaseUrl(config.upstream.baseUrl) }, 'wsmirror daemon starting');
    // Each cycle stores when the next one starts, for `wsmirror status` (known once started).
    let scheduler: Scheduler | undefined;
    const daemon = await startDaemon({
      config,
      logger,
      metrics,
      redact: createRedactor([config.upstream.apiKey]),
      runOnStart: options.runOnStart ?? true,
      // Without its sync lock, or with its SQLite file gone, the daemon must not go on; nor when
      // it cannot open the mirror for a reason no retry removes (a setting, a grant). A lock
      // another process holds at start passes (MIRROR_UNAVAILABLE): the next cycle tries again.
      stopsOn: (error) => (error instanceof MirrorLostError && !waitedOut(error)) || (cycle === undefined && !retriedAtStart(error) && !waitedOut(error)),
      cycle: async (signal) => {
        cycle ??= await openSyncCycle(config, { logger, metrics, progress: true, signal });
        let report: CycleReport;
        try {
          report = await cycle.scheduled(signal, (startedAt, finishedAt) => scheduler?.nextRunAfter(startedAt, finishedAt) ?? null);
        } catch (error) {
          if (waitedOut(error)) {
            // Another process syncs the mirror now: let it go (its lock, connections, file), and
            // open it anew at a later cycle, which waits for the lock as at start.
            const lost = cycle;
            cycle = undefined;
            await lost.close();
          }
          throw error;
        }
        await options.onCycle?.(report);
        return report;
      },
    });
    scheduler = daemon.scheduler;
    await daemon.stopped;
    if (daemon.stoppedByError !== undefined) {
      const why = daemon.stoppedByError instanceof MirrorLostError ? 'it can no longer sync this mirror' : 'it could not start syncing';
      logger.error({ err: { code: (daemon.stoppedByError as WsmirrorError).code } }, `wsmirror daemon stopped: ${why}`);
      throw daemon.stoppedByError;
    }
    if (daemon.stoppedBy !== undefined) {
      const interrupted = daemon.scheduler.lastOutcome?.result === 'aborted';
      const message = interrupted && cycle !== undefined
        ? describeStop(daemon.stoppedBy, cycle.tally())
        : `stopped by ${daemon.stoppedBy} ${cycle === undefined ? 'before the mirror was opened' : 'between cycles'}: nothing was left unfinished`;
      logger.info({ signal: daemon.stoppedBy }, message);
      options.onStopped?.(message);
    }
  } finally {
    if (options.cycle === undefined) await cycle?.close();
  }
  logger.info({}, 'wsmirror daemon stopped');
}

/**
 * Failures to open the cycle that `run` waits out, trying again at each cycle: the mirror's
 * database or upstream not reachable yet (at boot, during a restart or a failover), the mirror
 * synced by another process for now (a `sync` run by hand), upstream failing or throttling. Codes, not classes: the setting hints rewrap errors with their code.
 */
const RETRIED_AT_START = new Set(['MIRROR_UNAVAILABLE', 'NETWORK', 'UPSTREAM_SERVER_ERROR', 'UPSTREAM_RATE_LIMITED']);

function retriedAtStart(error: unknown): boolean {
  return error instanceof WsmirrorError && RETRIED_AT_START.has(error.code);
}
