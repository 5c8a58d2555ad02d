import { Option, type Command } from 'commander';
import { LOG_FORMATS } from '../daemon/terminal.ts';

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
    .addOption(
      new Option('--log-format <format>', 'readable lines and progress bars on a terminal (auto), or always JSON lines or readable ones; overrides $WSMIRROR_LOG_FORMAT')
        .choices(LOG_FORMATS),
    );
}
