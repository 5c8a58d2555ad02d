import type { Command } from 'commander';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export function defineRunCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('run')
      .description('run the daemon: a cycle on every tick of the schedule, until SIGTERM or SIGINT'),
  ).action(async (flags: ConfigFlags) => {
    const [{ openCommand }, { runSyncDaemon }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/sync-daemon.ts'),
    ]);
    // The redacted configuration at debug, and a warning for misspelt WSMIRROR_* variables.
    const { config, logger } = openCommand(flags);
    await runSyncDaemon(config, { logger });
  });
}
