import type { Command } from 'commander';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export function defineRunCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('run')
      .description('run the daemon: a cycle on every tick of the schedule, until SIGTERM or SIGINT'),
  ).action(async (flags: ConfigFlags) => {
    const [{ commandLogger, loadCommandConfig }, { logConfiguration, startDaemon }, { Metrics }, { createProgress }, { createRedactor }, { openSyncStack }, { cycleProblems }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/daemon.ts'),
      import('../../daemon/metrics.ts'),
      import('../../daemon/progress.ts'),
      import('../../daemon/logger.ts'),
      import('../sync-stack.ts'),
      import('../../sync/index.ts'),
    ]);
    const config = loadCommandConfig(flags);
    const logger = commandLogger(config);
    // The redacted configuration at debug, and a warning for misspelt WSMIRROR_* variables.
    logConfiguration(logger, config);
    const metrics = new Metrics();
    const progress = createProgress({ label: 'sync', logger, logIntervalMs: config.log.progressIntervalMs });
    const stack = await openSyncStack(config, { logger, metrics, progress });
    logger.info({ mirror: stack.mirror.displayUrl, upstream: config.upstream.baseUrl }, 'wsmirror daemon starting');
    const daemon = await startDaemon({
      config,
      logger,
      metrics,
      redact: createRedactor([config.upstream.apiKey]),
      cycle: async (signal) => {
        const report = await stack.engine.runCycle({ signal });
        const problems = cycleProblems(report);
        if (problems.length > 0) throw new Error(problems.join('; '));
        return report;
      },
    });
    await daemon.stopped;
    await stack.close();
    logger.info({}, 'wsmirror daemon stopped');
  });
}
