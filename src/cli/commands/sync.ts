import type { Command } from 'commander';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export function defineSyncCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('sync')
      .description('run one full cycle (push local edits, schema, records) and exit: 0 when the mirror is current')
      .option('--json', 'print the cycle report as JSON on stdout (logs go to stderr)'),
  ).action(async (flags: ConfigFlags & { json?: boolean }) => {
    const [
      { commandLogger, loadCommandConfig }, { logConfiguration }, { createProgress }, { handleShutdownSignals }, { openSyncStack },
      { cycleProblems },
    ] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/daemon.ts'),
      import('../../daemon/progress.ts'),
      import('../../daemon/shutdown.ts'),
      import('../sync-stack.ts'),
      import('../../sync/index.ts'),
    ]);
    const config = loadCommandConfig(flags);
    const logger = commandLogger(config, { toStderr: flags.json === true });
    logConfiguration(logger, config);
    // SIGTERM/SIGINT as for `run`: the cycle stops between two mirror transactions (the open one
    // commits), the connections close, then the process exits; a second signal exits at once.
    const stopping = new AbortController();
    let received: string | undefined;
    const removeSignalHandlers = handleShutdownSignals({
      logger,
      onSignal: (signal) => {
        received = signal;
        stopping.abort(new Error(`stopped by ${signal}`));
      },
    });
    try {
      const progress = createProgress({ label: 'sync', logger, logIntervalMs: config.log.progressIntervalMs });
      const stack = await openSyncStack(config, { logger, progress, signal: stopping.signal });
      try {
        stopping.signal.throwIfAborted();
        const report = await stack.engine.runCycle({ forceFullScan: true, signal: stopping.signal });
        if (flags.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        const problems = cycleProblems(report);
        for (const problem of problems) process.stderr.write(`wsmirror sync: ${problem}\n`);
        process.exitCode = problems.length === 0 ? EXIT.ok : EXIT.syncFailed;
      } finally {
        await stack.close();
      }
    } catch (error) {
      if (received === undefined) throw error;
      // Not current, so not 0 (DESIGN §2): what was committed stays, the next sync goes on from it.
      process.stderr.write(`wsmirror sync: stopped by ${received}: the mirror is not current; the next sync continues from what was committed\n`);
      process.exitCode = EXIT.syncFailed;
    } finally {
      removeSignalHandlers();
    }
  });
}
