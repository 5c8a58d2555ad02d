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
    const [{ commandLogger, loadCommandConfig }, { logConfiguration }, { createProgress }, { openSyncStack }, { cycleProblems }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/daemon.ts'),
      import('../../daemon/progress.ts'),
      import('../sync-stack.ts'),
      import('../../sync/index.ts'),
    ]);
    const config = loadCommandConfig(flags);
    const logger = commandLogger(config, { toStderr: flags.json === true });
    logConfiguration(logger, config);
    const progress = createProgress({ label: 'sync', logger, logIntervalMs: config.log.progressIntervalMs });
    const stack = await openSyncStack(config, { logger, progress });
    try {
      const report = await stack.engine.runCycle({ forceFullScan: true });
      if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
      const problems = cycleProblems(report);
      for (const problem of problems) process.stderr.write(`wsmirror sync: ${problem}\n`);
      process.exitCode = problems.length === 0 ? EXIT.ok : EXIT.syncFailed;
    } finally {
      await stack.close();
    }
  });
}
