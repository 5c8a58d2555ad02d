/**
 * The upstream client of a validated configuration. Every command that talks to upstream builds
 * it here, so a request is counted in the metrics the same way whoever made it.
 */
import { WorkspaceClient } from '../client/index.ts';
import type { Config } from './config-types.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

export interface UpstreamClientDeps {
  logger: Logger;
  /** Receives one observation per request attempt and one per retry. */
  metrics?: Metrics;
}

export function createWorkspaceClient(config: Pick<Config, 'upstream'>, deps: UpstreamClientDeps): WorkspaceClient {
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
