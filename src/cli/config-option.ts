import type { Command } from 'commander';

export interface ConfigFlags {
  config?: string;
  logFormat?: string;
}

/**
 * `--config FILE`, shared by the commands that read the configuration. Kept apart from the
 * loading code so declaring the command line loads nothing heavy.
 */
export function withConfigOption(command: Command): Command {
  return command
    .option('--config <file>', 'configuration file (default: $WSMIRROR_CONFIG, else ./wsmirror.yaml if present)')
    .option('--log-format <format>', 'auto (readable lines and progress bars on a terminal, JSON lines elsewhere), json or pretty; overrides $WSMIRROR_LOG_FORMAT');
}
