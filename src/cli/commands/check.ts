import type { Command } from 'commander';
import { EXIT } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';
import { textTable, type TextColumn } from '../text-table.ts';
import type { CheckReport } from '../../daemon/config-check.ts';

type PlannedTable = NonNullable<CheckReport['plan']>['tables'][number];

const PLAN_COLUMNS: readonly TextColumn<PlannedTable>[] = [
  { title: 'TABLE', value: (t) => t.table },
  { title: 'MODE', value: (t) => t.mode },
  { title: 'ACTION', value: (t) => t.action },
  { title: 'ROWS', right: true, value: (t) => (t.rows === null ? '-' : String(t.rows)) },
  { title: 'ESTIMATED RECORDS', right: true, value: (t) => (t.estimatedRows === null ? '-' : `~${t.estimatedRows}`) },
];

/** The plain-text form: one line per check, then the plan as an aligned table. */
export function formatCheckText(report: CheckReport): string {
  const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
  const lines = [`${mark(true)} configuration: ${report.configFile ?? 'environment only (no configuration file)'}`];
  const up = report.upstream;
  lines.push(`${mark(up.ok)} upstream: ${up.baseUrl}, workspace ${up.workspaceId}${up.ok ? ' (the key is accepted)' : `: ${up.error}`}`);
  for (const unmatched of report.unmatchedPatterns) lines.push(`warn ${unmatched.message}`);
  const m = report.mirror;
  const where = `${m.url}${m.schema === null ? '' : ` (schema ${m.schema})`}`;
  // Not made yet: no file, no schema, or a schema without the catalog (an empty one made for wsmirror).
  const state = m.exists ? 'exists, writable' : 'no wsmirror catalog there yet: the first sync creates it';
  lines.push(`${mark(m.ok)} mirror: ${where}: ${m.ok ? state : m.problems.join('; ')}`);
  for (const upgrade of m.upgrades) lines.push(`note ${upgrade}`);
  if (report.plan) {
    const { plan } = report;
    lines.push('', 'a sync would:');
    if (plan.operations.length === 0) lines.push('  change no table definition');
    else for (const op of plan.operations) lines.push(`  ${op}`);
    lines.push('', ...textTable(PLAN_COLUMNS, plan.tables, '  '));
    for (const table of plan.refused) lines.push(`  ${table}: refused (its name is outside the API's rule)`);
    for (const table of plan.unmigrated) {
      lines.push(`  ${table}: held back, as an older wsmirror made it: an object of your own depends on it (wsmirror status says which)`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function defineCheckCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('check')
      .description('validate the configuration, reach upstream with the key, open the mirror and show what a sync ' +
        'would do (tables, modes, estimated records), writing nothing; exits 78 when something does not work')
      .option('--json', 'print the report as one JSON document'),
  ).action(async (flags: ConfigFlags & { json?: boolean }) => {
    const [{ openCommand }, { runCheck }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/config-check.ts'),
    ]);
    // A configuration that does not load fails here: exit 78 with the setting to fix.
    const { config, logger } = openCommand(flags, { toStderr: true });
    const report = await runCheck(config, { logger });
    process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatCheckText(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.config;
  });
}
