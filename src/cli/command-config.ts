import { pino } from 'pino';
import type { Config, LocalConfig } from '../daemon/config-types.ts';
import { loadConfig } from '../daemon/load-config.ts';
import { createLogger, type Logger } from '../daemon/logger.ts';
import type { ConfigFlags } from './config-option.ts';

/**
 * Loads and validates the configuration; a problem throws ConfigError (exit 78). Commands that
 * only read the mirror (`status`) pass `upstream: 'optional'`.
 */
export function loadCommandConfig(flags: ConfigFlags): Config;
export function loadCommandConfig(flags: ConfigFlags, options: { upstream: 'optional' }): LocalConfig;
export function loadCommandConfig(flags: ConfigFlags, options: { upstream?: 'optional' } = {}): Config | LocalConfig {
  const file = flags.config === undefined ? {} : { file: flags.config };
  return options.upstream === 'optional' ? loadConfig({ ...file, upstream: 'optional' }) : loadConfig(file);
}

/** The process logger: JSON lines on stdout, or on stderr when stdout carries a report. */
export function commandLogger(config: Config | LocalConfig, options: { toStderr?: boolean } = {}): Logger {
  return createLogger({
    level: config.log.level,
    secrets: [config.upstream?.apiKey],
    ...(options.toStderr ? { destination: pino.destination({ dest: 2, sync: true }) } : {}),
  });
}
