import { WorkspaceClient } from '../client/index.ts';
import type { Config } from '../daemon/config-schema.ts';
import type { Logger } from '../daemon/logger.ts';
import type { Metrics } from '../daemon/metrics.ts';
import type { ProgressReporter, ProgressTask } from '../daemon/progress.ts';
import type { Mirror } from '../mirror/mirror.ts';
import { openMirror } from '../mirror/open-mirror.ts';
import { SyncEngine, type SyncObserver } from '../sync/index.ts';
import { claimMirror } from './mirror-claim.ts';

/** The pieces one daemon process runs: client, mirror and the engine over them. */
export interface SyncStack {
  engine: SyncEngine;
  client: WorkspaceClient;
  mirror: Mirror;
  close(): Promise<void>;
}

export interface SyncStackDeps {
  logger: Logger;
  metrics?: Metrics;
  progress?: ProgressReporter;
  /** The mirror is a file `wsmirror demo` creates for itself: mark it so (see mirror-claim.ts). */
  demo?: boolean;
  /** Aborts the upstream check (a shutdown signal during start-up). */
  signal?: AbortSignal;
}

/**
 * The mirror URL to open: for SQLite, `sqlite:` plus the path the configuration already made
 * absolute against the working directory (not the configuration file's directory).
 */
export function mirrorUrlOf(config: Pick<Config, 'mirror'>): string {
  return config.mirror.dialect === 'sqlite' ? `sqlite:${config.mirror.path}` : config.mirror.url;
}

function observerFor(deps: SyncStackDeps): SyncObserver {
  const tasks = new Map<string, ProgressTask>();
  return {
    rowsApplied: (table, operation, count) => deps.metrics?.observeRowsApplied(table, operation, count),
    scanProgress: (table, rows) => {
      if (!deps.progress) return;
      let task = tasks.get(table);
      if (!task) tasks.set(table, (task = deps.progress.task(table)));
      task.add(rows);
    },
    scanFinished: (table) => {
      tasks.get(table)?.done();
      tasks.delete(table);
    },
    scanStarted: (table, { rowsRead, estimatedRows }) => {
      if (!deps.progress) return;
      const task = deps.progress.task(table);
      tasks.set(table, task);
      if (estimatedRows !== null) task.setTotal(estimatedRows);
      task.add(rowsRead);
    },
    tablePulled: (table, currentAsOf) => deps.metrics?.setTableCurrentAsOf(table, currentAsOf),
    tablesMirrored: (tables) => deps.metrics?.setTables(tables),
    outboxChecked: (counts, oldestPendingAt) => {
      deps.metrics?.setOutboxDepth(counts);
      deps.metrics?.setOldestPendingEdit(oldestPendingAt);
    },
  };
}

/** The upstream client of a validated configuration, reporting its requests to the metrics. */
export function createWorkspaceClient(config: Pick<Config, 'upstream'>, deps: Pick<SyncStackDeps, 'logger' | 'metrics'>): WorkspaceClient {
  const { upstream } = config;
  return new WorkspaceClient({
    baseUrl: upstream.baseUrl,
    apiKey: upstream.apiKey,
    workspaceId: upstream.workspaceId,
    timeoutMs: upstream.timeoutMs,
    maxRetries: upstream.retries,
    concurrency: upstream.concurrency,
    maxResponseBytes: upstream.maxResponseBytes,
    logger: deps.logger,
    onRequest: (info) => {
      const status = info.status === 'network' ? 'error' : info.status;
      deps.metrics?.observeRequest({ endpoint: info.endpoint, method: info.method, status, durationMs: info.durationMs });
      if (info.willRetry) deps.metrics?.observeRetry({ endpoint: info.endpoint, reason: String(info.status) });
    },
  });
}

/**
 * Builds client, mirror and engine from a validated configuration (the composition root).
 * Upstream is asked first: a rejected key or an unknown workspace fails here, before the mirror
 * (a SQLite file, a Postgres schema) is created. Then the mirror is claimed for the workspace.
 */
export async function openSyncStack(config: Config, deps: SyncStackDeps): Promise<SyncStack> {
  const { upstream, sync } = config;
  const client = createWorkspaceClient(config, deps);
  let mirror: Mirror;
  try {
    await client.getWorkspace(deps.signal ? { signal: deps.signal } : {});
    mirror = await openMirror(mirrorUrlOf(config), { pgSchema: config.mirror.pgSchema, logger: deps.logger });
  } catch (error) {
    await client.close();
    throw error;
  }
  try {
    await claimMirror(mirror, upstream.workspaceId, { demo: deps.demo === true });
  } catch (error) {
    await client.close();
    await mirror.close();
    throw error;
  }
  const engine = new SyncEngine({
    client,
    mirror,
    logger: deps.logger,
    observer: observerFor(deps),
    options: {
      lookbackMs: sync.lookbackMs,
      pageSize: sync.pageSize,
      backfillConcurrency: sync.backfillConcurrency,
      fullScanEveryMs: sync.fullScanEveryMs,
      maxDeleteShare: sync.maxDeleteShare,
      tables: { include: config.tables.include, exclude: config.tables.exclude },
      conflictPolicy: config.tables.conflictPolicy,
      conflictPolicies: config.tables.conflictPolicies,
    },
  });
  return {
    engine,
    client,
    mirror,
    async close() {
      await client.close();
      await mirror.close();
    },
  };
}
