import { pino } from 'pino';
import type { Command } from 'commander';
import type { Config } from '../daemon/config-schema.ts';
import { loadConfig } from '../daemon/load-config.ts';
import { createLogger, type Logger } from '../daemon/logger.ts';

export interface ConfigFlags {
  config?: string;
}

/** `--config FILE`, shared by the commands that read the configuration. */
export function withConfigOption(command: Command): Command {
  return command.option('--config <file>', 'configuration file (default: $WSMIRROR_CONFIG, else ./wsmirror.yaml if present)');
}

/** Loads and validates the configuration; a problem throws ConfigError (exit 78). */
export function loadCommandConfig(flags: ConfigFlags): Config {
  return loadConfig(flags.config === undefined ? {} : { file: flags.config });
}

/** The process logger: JSON lines on stdout, or on stderr when stdout carries a report. */
export function commandLogger(config: Config, options: { toStderr?: boolean } = {}): Logger {
  return createLogger({
    level: config.log.level,
    secrets: [config.upstream.apiKey],
    ...(options.toStderr ? { destination: pino.destination({ dest: 2, sync: true }) } : {}),
  });
}
