import type { Command } from 'commander';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

export function defineSyncCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('sync')
      .description('run one full cycle (schema, push local edits, then records) and exit: 0 when the mirror is current')
      .option('--json', 'print the cycle report as JSON on stdout (logs go to stderr)')
      .option('--upstream-moved', 'upstream.baseUrl names the upstream the mirror was synced from, at a new address: '
        + 'follow it from now on, keeping the mirror\'s cursors'),
  ).action(async (flags: ConfigFlags & { json?: boolean; upstreamMoved?: boolean }) => {
    const [{ openCommand }, { runSingleCycle }, { cycleProblems }, { describeStop }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/single-cycle.ts'),
      import('../../sync/index.ts'),
      import('../../daemon/stop-report.ts'),
    ]);
    const { config, logger } = openCommand(flags, { toStderr: flags.json === true });
    const result = await runSingleCycle(config, { logger, upstreamMove: flags.upstreamMoved === true ? 'follow' : 'refuse' });
    if ('stoppedBy' in result) {
      // Not current, so not 0 (DESIGN §2): what was committed stays, the next sync goes on from it.
      process.stderr.write(`wsmirror sync: ${describeStop(result.stoppedBy, result.tally)}; the mirror is not current\n`);
      process.exitCode = EXIT.syncFailed;
      return;
    }
    if (flags.json) process.stdout.write(`${JSON.stringify(result.report)}\n`);
    const problems = cycleProblems(result.report);
    for (const problem of problems) process.stderr.write(`wsmirror sync: ${problem}\n`);
    process.exitCode = problems.length === 0 ? EXIT.ok : EXIT.syncFailed;
  });
}
