// The daemon's public surface, for the CLI (the composition root) and the engine's hooks.
export { CONFIG_KEYS, describeUnknownVariable, unknownEnvironmentVariables } from './config-variables.ts';
export { parseSchedule } from './schedule.ts';
export type { Schedule } from './schedule.ts';
export { LOG_LEVELS } from './logger.ts';
export type { LogLevel } from './logger.ts';
export type { ConfigKey } from './config-variables.ts';
export type {
  Config,
  HttpConfig,
  LocalConfig,
  LogConfig,
  MirrorConfig,
  SyncConfig,
  TablesConfig,
  UpstreamConfig,
} from './config-types.ts';
export { loadConfig, redactConfig, resolveConfig } from './load-config.ts';
export type { LoadConfigOptions, ResolveConfigOptions } from './load-config.ts';
export { formatDuration, formatSize, parseDuration, parseSize } from './units.ts';
export { createLogger, createLogRedactor } from './logger.ts';
export { REDACTED, createRedactor } from '../api/secret-redaction.ts';
export type { Logger, LoggerOptions } from './logger.ts';
export { Metrics, createMetrics } from './metrics.ts';
export type { CycleResult, MetricsOptions, OutboxStatus, RequestObservation, RetryObservation, RowOperation } from './metrics.ts';
export { evaluateReadiness } from './readiness.ts';
export type { ReadinessInput, ReadinessReport } from './readiness.ts';
export { listenHttpServer, startHttpServer } from './http-server.ts';
export type { HttpServer, HttpServerDeps } from './http-server.ts';
export { Scheduler } from './scheduler.ts';
export type { CycleFunction, CycleOutcome, SchedulerOptions } from './scheduler.ts';
export { handleShutdownSignals } from './shutdown.ts';
export type { ShutdownOptions, ShutdownSignal } from './shutdown.ts';
export { ProgressReporter, createProgress } from './progress.ts';
export type { ProgressOptions, ProgressStream, ProgressTask, TaskSnapshot } from './progress.ts';
export { startDaemon } from './daemon.ts';
export { logConfiguration } from './log-configuration.ts';
export type { Daemon, DaemonOptions } from './daemon.ts';
export { createWorkspaceClient } from './upstream-client.ts';
export { mirrorUrlOf, openConfiguredMirror } from './configured-mirror.ts';
export { claimMirror, readClaim, DEMO_CREATOR } from './mirror-claim.ts';
export type { MirrorClaim } from './mirror-claim.ts';
export { openSyncCycle, withSyncCycle } from './sync-cycle.ts';
export type { SyncCycle, SyncCycleDeps } from './sync-cycle.ts';
export type { CycleTally } from './cycle-observer.ts';
export { runSyncDaemon } from './sync-daemon.ts';
export { runSingleCycle } from './single-cycle.ts';
export type { SingleCycleResult } from './single-cycle.ts';
