import type { Command } from 'commander';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

interface ResyncFlags extends ConfigFlags {
  json?: boolean;
  sync?: boolean;
}

export function defineResyncCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('resync')
      .description('mirror the named tables (module.table or SQL name; default all) again from scratch, keeping ' +
        'local edits still in the outbox; other tables keep their cursors. Then runs one cycle, as sync does')
      .argument('[tables...]', 'tables to mirror again (default: every mirrored table)')
      .option('--no-sync', 'only mark the tables: a running wsmirror run backfills them at its next cycle')
      .option('--json', 'print the cycle report as JSON on stdout (logs go to stderr)'),
  ).action(async (names: string[], flags: ResyncFlags) => {
    const [
      { openCommand }, { runSingleCycle }, { cycleProblems, tableLabel }, { describeStop },
      { openConfiguredMirror }, { tablesNamed }, { followUpstream, upstreamAddress },
    ] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/single-cycle.ts'),
      import('../../sync/index.ts'),
      import('../../daemon/stop-report.ts'),
      import('../../daemon/configured-mirror.ts'),
      import('../table-names.ts'),
      import('../../daemon/mirror-claim.ts'),
    ]);
    const say = (line: string) => (flags.json ? process.stderr : process.stdout).write(`${line}\n`);
    const labels = (tables: { moduleName: string; tableName: string }[]) => tables.map(tableLabel).join(', ');

    if (flags.sync === false) {
      // Marking reads and writes only the mirror: no upstream setting is needed.
      const { config: local, logger: localLogger } = openCommand(flags, { upstream: 'optional', toStderr: true });
      const mirror = await openConfiguredMirror(local, { logger: localLogger, mustExist: true, migrate: true });
      try {
        const tables = tablesNamed((await mirror.readCatalog()).tables, names);
        await mirror.resetTables(tables.map((t) => t.tableId));
        say(`marked for a new backfill: ${labels(tables)}; the next cycle of wsmirror run (or sync) mirrors them again`);
      } finally {
        await mirror.close();
      }
      return;
    }

    const { config, logger } = openCommand(flags, { toStderr: flags.json === true });
    let chosen = '';
    // Every table mirrored again: the mirror may then follow another upstream address (mirror-claim.ts).
    const everyTable = names.length === 0;
    const result = await runSingleCycle(config, {
      logger,
      upstreamMove: everyTable ? 'rebind' : 'refuse',
      before: async (cycle) => {
        const tables = tablesNamed((await cycle.mirror.readCatalog()).tables, names);
        await cycle.mirror.resetTables(tables.map((t) => t.tableId));
        if (everyTable) {
          const { moved, held } = await followUpstream(cycle.mirror, config.upstream.baseUrl);
          if (moved) {
            logger.warn({ held }, `the mirror follows ${upstreamAddress(config.upstream.baseUrl)} from now on; ${held} pending `
              + `edit(s) of records of the upstream it followed are held as failed (wsmirror outbox lists them)`);
          }
        }
        chosen = labels(tables);
        logger.info({ tables: tables.map((t) => tableLabel(t)) }, 'tables marked for a new backfill');
      },
    });
    if ('stoppedBy' in result) {
      process.stderr.write(`wsmirror resync: ${describeStop(result.stoppedBy, result.tally)}; ` +
        'the tables stay marked and their backfill resumes at the next sync\n');
      process.exitCode = EXIT.syncFailed;
      return;
    }
    if (flags.json) process.stdout.write(`${JSON.stringify(result.report)}\n`);
    const problems = cycleProblems(result.report);
    for (const problem of problems) process.stderr.write(`wsmirror resync: ${problem}\n`);
    if (problems.length === 0) say(`mirrored again: ${chosen}`);
    process.exitCode = problems.length === 0 ? EXIT.ok : EXIT.syncFailed;
  });
}
