import type { Command } from 'commander';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export function defineSyncCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('sync')
      .description('run one full cycle (schema, records) and exit: 0 when the mirror is current')
      .option('--json', 'print the cycle report as JSON on stdout (logs go to stderr)'),
  ).action(async (flags: ConfigFlags & { json?: boolean }) => {
    const [{ commandLogger, loadCommandConfig }, { logConfiguration }, { createProgress }, { openSyncStack }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/daemon.ts'),
      import('../../daemon/progress.ts'),
      import('../sync-stack.ts'),
    ]);
    const config = loadCommandConfig(flags);
    const logger = commandLogger(config, { toStderr: flags.json === true });
    logConfiguration(logger, config);
    const progress = createProgress({ label: 'sync', logger, logIntervalMs: config.log.progressIntervalMs });
    const stack = await openSyncStack(config, { logger, progress });
    try {
      const report = await stack.engine.runCycle({ forceFullScan: true });
      if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
      const failed = report.tables.filter((t) => t.action === 'failed');
      for (const t of failed) process.stderr.write(`wsmirror sync: ${t.table}: ${t.error?.message ?? 'failed'}\n`);
      process.exitCode = failed.length === 0 ? EXIT.ok : EXIT.syncFailed;
    } finally {
      await stack.close();
    }
  });
}
