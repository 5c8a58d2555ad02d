/**
 * One way to run a sync cycle. `run`, `sync`, `demo` (and every command that needs the engine)
 * build client, mirror, engine, metrics feed and progress here; the commands only parse their
 * arguments and call it. The composition root of the pull and push paths.
 */
import type { WorkspaceClient } from '../client/index.ts';
import { MirrorLostError } from '../errors.ts';
import type { Mirror } from '../mirror/mirror.ts';
import { SyncEngine, cycleProblems, type CycleOptions, type CycleReport } from '../sync/index.ts';
import type { Config } from './config-types.ts';
import { openConfiguredMirror } from './configured-mirror.ts';
import { createCycleObserver, type CycleTally } from './cycle-observer.ts';
import { summarizeCycle } from './cycle-summary.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { claimMirror, type UpstreamMove } from './mirror-claim.ts';
import { createProgress, type ProgressReporter } from './progress.ts';
import { explainFailure, withSettingHint } from './setting-hints.ts';
import { isHuman } from './terminal.ts';
import { createWorkspaceClient } from './upstream-client.ts';

export interface SyncCycleDeps {
  logger: Logger;
  /** Fed with requests, rows, lag and outbox depth; none by default. */
  metrics?: Metrics;
  /** Show backfills and full scans as they go (`run`, `sync`); off by default. */
  progress?: boolean;
  /** The mirror is a file `wsmirror demo` creates for itself: mark it so (see mirror-claim.ts). */
  demo?: boolean;
  /** What to do with a mirror synced from another upstream address (mirror-claim.ts); refused by default. */
  upstreamMove?: UpstreamMove;
  /** Aborts the opening (a shutdown signal during start-up). */
  signal?: AbortSignal;
  /**
   * Opens the mirror beside a process that syncs it, without the sync lock: for a command that
   * runs no cycle (`outbox discard` while the daemon runs). Off by default.
   */
  besideSync?: boolean;
}

export interface SyncCycle {
  readonly engine: SyncEngine;
  readonly client: WorkspaceClient;
  readonly mirror: Mirror;
  /** Runs one cycle and returns its report, failures included. */
  run(options?: CycleOptions): Promise<CycleReport>;
  /**
   * Runs one cycle for the scheduler: a cycle with problems throws them as one error, so the
   * daemon counts it as failed.
   */
  scheduled(signal: AbortSignal, nextRunAt?: CycleOptions['nextRunAt']): Promise<CycleReport>;
  /** Which tables the running (or last) cycle finished and which it has left. */
  tally(): CycleTally;
  close(): Promise<void>;
}

/**
 * Opens a cycle from a validated configuration. Upstream is asked first: a rejected key or an
 * unknown workspace fails here, before the mirror (a SQLite file, a Postgres schema) is created.
 * Then the mirror's sync lock is taken (unless `besideSync`), held until `close`, before the
 * mirror is opened, created or migrated, and the mirror is claimed for the workspace.
 */
export async function openSyncCycle(config: Config, deps: SyncCycleDeps): Promise<SyncCycle> {
  const { upstream, sync, tables } = config;
  const { logger, metrics } = deps;
  const client = createWorkspaceClient(config, { logger, ...(metrics ? { metrics } : {}) });
  let mirror: Mirror;
  try {
    await client.getWorkspace(deps.signal ? { signal: deps.signal } : {});
  } catch (error) {
    await client.close();
    throw withSettingHint(error, upstream, { workspaceCheck: true });
  }
  try {
    // The sync lock before anything is created or written: one process syncs a mirror at a time.
    mirror = await openConfiguredMirror(config, { logger, syncLock: deps.besideSync !== true });
  } catch (error) {
    await client.close();
    throw error;
  }
  try {
    await claimMirror(mirror, upstream.workspaceId, upstream.baseUrl, { demo: deps.demo === true, upstreamMove: deps.upstreamMove ?? 'refuse' });
  } catch (error) {
    await client.close();
    await mirror.close();
    throw error;
  }
  const progress: ProgressReporter | undefined = deps.progress === true
    ? createProgress({ label: 'sync', logger, logIntervalMs: config.log.progressIntervalMs, tty: isHuman(config.log.format, process.stderr) })
    : undefined;
  const observer = createCycleObserver({
    ...(metrics ? { metrics } : {}),
    ...(progress ? { progress } : {}),
  });
  const engine = new SyncEngine({
    client,
    mirror,
    logger,
    observer,
    options: {
      lookbackMs: sync.lookbackMs,
      pageSize: sync.pageSize,
      backfillConcurrency: sync.backfillConcurrency,
      fullScanEveryMs: sync.fullScanEveryMs,
      maxDeleteShare: sync.maxDeleteShare,
      createSettleMs: sync.createSettleMs,
      tables: { include: tables.include, exclude: tables.exclude, sources: tables.sources },
      conflictPolicy: tables.conflictPolicy,
      conflictPolicies: tables.conflictPolicies,
    },
  });
  const run = async (options: CycleOptions = {}) => {
    observer.reset();
    let report: CycleReport;
    try {
      report = await engine.runCycle(options);
    } catch (error) {
      if (error instanceof MirrorLostError) throw error;
      throw withSettingHint(error, upstream);
    }
    const explained = explainReport(report, upstream);
    const { summary, text } = summarizeCycle(explained);
    logger.info({ cycle: summary }, text);
    return explained;
  };
  return {
    engine,
    client,
    mirror,
    run,
    async scheduled(signal, nextRunAt) {
      const report = await run({ signal, ...(nextRunAt ? { nextRunAt } : {}) });
      const problems = cycleProblems(report);
      if (problems.length > 0) throw new Error(problems.join('; '));
      return report;
    },
    tally: () => observer.tally(),
    async close() {
      progress?.close();
      await client.close();
      await mirror.close();
    },
  };
}

/** The report with each failure's message naming the setting to fix, where one is the likely cause. */
function explainReport(report: CycleReport, upstream: Config['upstream']): CycleReport {
  const explain = (error: { code: string; message: string }) => ({ ...error, message: explainFailure(error, upstream) });
  return {
    ...report,
    push: report.push.error === undefined ? report.push : { ...report.push, error: explain(report.push.error) },
    tables: report.tables.map((t) => (t.error ? { ...t, error: explain(t.error) } : t)),
  };
}

/** Opens a cycle, hands it to `use`, and closes it whatever happens. */
export async function withSyncCycle<T>(config: Config, deps: SyncCycleDeps, use: (cycle: SyncCycle) => Promise<T>): Promise<T> {
  const cycle = await openSyncCycle(config, deps);
  try {
    return await use(cycle);
  } finally {
    await cycle.close();
  }
}
