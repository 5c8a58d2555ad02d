/**
 * One cycle in the foreground, stopped cleanly by SIGTERM or SIGINT (`wsmirror sync`, and the
 * commands that sync once after changing the mirror): the cycle stops between two mirror
 * transactions (the open one commits), the connections close, then the caller reports.
 * A second signal exits at once.
 */
import type { CycleReport } from '../sync/index.ts';
import type { Config } from './config-types.ts';
import type { CycleTally } from './cycle-observer.ts';
import type { Logger } from './logger.ts';
import type { UpstreamMove } from './mirror-claim.ts';
import { handleShutdownSignals, type ShutdownSignal } from './shutdown.ts';
import { openSyncCycle, type SyncCycle } from './sync-cycle.ts';

export type SingleCycleResult =
  | { readonly report: CycleReport }
  | { readonly stoppedBy: ShutdownSignal; readonly tally: CycleTally };

export interface SingleCycleOptions {
  logger: Logger;
  /** Scan every table without history now (`wsmirror sync`); default true. */
  forceFullScan?: boolean;
  /** Show backfills and scans as they go; default true. */
  progress?: boolean;
  /** What to do with a mirror synced from another upstream address (SyncCycleDeps); refused by default. */
  upstreamMove?: UpstreamMove;
  /** Runs after the cycle is open and before it runs (e.g. to reset tables); inside the signal handling. */
  before?: (cycle: SyncCycle, signal: AbortSignal) => Promise<void>;
}

export async function runSingleCycle(config: Config, options: SingleCycleOptions): Promise<SingleCycleResult> {
  const { logger } = options;
  const stopping = new AbortController();
  let received: ShutdownSignal | undefined;
  let cycle: SyncCycle | undefined;
  const removeSignalHandlers = handleShutdownSignals({
    logger,
    onSignal: (signal) => {
      received = signal;
      stopping.abort(new Error(`stopped by ${signal}`));
    },
  });
  try {
    cycle = await openSyncCycle(config, {
      logger, progress: options.progress ?? true, signal: stopping.signal, upstreamMove: options.upstreamMove ?? 'refuse',
    });
    stopping.signal.throwIfAborted();
    await options.before?.(cycle, stopping.signal);
    const report = await cycle.run({ forceFullScan: options.forceFullScan ?? true, signal: stopping.signal });
    return { report };
  } catch (error) {
    if (received === undefined) throw error;
    return { stoppedBy: received, tally: cycle?.tally() ?? { tables: [], pulled: new Set(), rowsRead: new Map() } };
  } finally {
    await cycle?.close();
    removeSignalHandlers();
  }
}
