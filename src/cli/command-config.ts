import { pino } from 'pino';
import type { Config, LocalConfig } from '../daemon/config-types.ts';
import { loadConfig } from '../daemon/load-config.ts';
import { createLogger, type Logger } from '../daemon/logger.ts';
import { logConfiguration } from '../daemon/log-configuration.ts';
import { isHuman } from '../daemon/terminal.ts';
import type { ConfigFlags } from './config-option.ts';

/**
 * Loads and validates the configuration; a problem throws ConfigError (exit 78). Commands that
 * only read the mirror (`status`) pass `upstream: 'optional'`.
 */
export function loadCommandConfig(flags: ConfigFlags): Config;
export function loadCommandConfig(flags: ConfigFlags, options: { upstream: 'optional' }): LocalConfig;
export function loadCommandConfig(flags: ConfigFlags, options: { upstream?: 'optional' } = {}): Config | LocalConfig {
  const file = flags.config === undefined ? {} : { file: flags.config };
  // --log-format is WSMIRROR_LOG_FORMAT given on the command line (commander checked its value).
  const env = flags.logFormat === undefined ? {} : { env: { ...process.env, WSMIRROR_LOG_FORMAT: flags.logFormat } };
  return options.upstream === 'optional' ? loadConfig({ ...file, ...env, upstream: 'optional' }) : loadConfig({ ...file, ...env });
}

/**
 * The process logger: on stdout, or on stderr when stdout carries a report; JSON lines, or
 * readable ones when `log.format` says so (by default: when that stream is a terminal).
 */
export function commandLogger(config: Config | LocalConfig, options: { toStderr?: boolean } = {}): Logger {
  return createLogger({
    level: config.log.level,
    secrets: [config.upstream?.apiKey],
    pretty: isHuman(config.log.format, options.toStderr ? process.stderr : process.stdout),
    ...(options.toStderr ? { destination: pino.destination({ dest: 2, sync: true }) } : {}),
  });
}

/**
 * What every command starts with: its configuration, its logger (on stderr when stdout carries
 * a report), and the configuration logged, so a misspelt `WSMIRROR_*` variable is warned about
 * whatever the command.
 */
export function openCommand(flags: ConfigFlags, options?: { toStderr?: boolean }): { config: Config; logger: Logger };
export function openCommand(flags: ConfigFlags, options: { upstream: 'optional'; toStderr?: boolean }): { config: LocalConfig; logger: Logger };
export function openCommand(flags: ConfigFlags, options: { upstream?: 'optional'; toStderr?: boolean } = {}): { config: Config | LocalConfig; logger: Logger } {
  const config = options.upstream === 'optional' ? loadCommandConfig(flags, { upstream: 'optional' }) : loadCommandConfig(flags);
  const logger = commandLogger(config, { toStderr: options.toStderr === true });
  logConfiguration(logger, config);
  return { config, logger };
}
