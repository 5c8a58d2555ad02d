// The daemon's public surface, for the CLI (the composition root) and the engine's hooks.
export * from './config-schema.ts';
export * from './load-config.ts';
export * from './table-filter.ts';
export * from './units.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './readiness.ts';
export * from './http-server.ts';
export * from './scheduler.ts';
export * from './shutdown.ts';
export * from './progress.ts';
export * from './daemon.ts';
