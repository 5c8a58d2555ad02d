import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, EXIT, UsageError } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

interface ConformanceFlags extends ConfigFlags {
  module?: string;
  rate?: number;
  only?: string[];
  json?: boolean;
  dryRun?: boolean;
  timeLimit?: number;
}

/** Requests per second against an upstream unless `--rate` says otherwise: gentle on a shared workspace. */
const DEFAULT_RATE = 5;

function rate(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !Number.isFinite(n)) throw new InvalidArgumentError('expected requests per second, a number 0 or more (0 = unbounded)');
  return n;
}

/** Minutes a run may take before it stops itself (and the minute its tables say it ends by). */
const DEFAULT_TIME_LIMIT_MINUTES = 60;

function minutes(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !(n > 0) || n > 7 * 24 * 60) throw new InvalidArgumentError('expected minutes, a number above 0 and at most 10080 (a week)');
  return n;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function defineConformanceCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('conformance')
      .description('check that the upstream (or, with none configured, an embedded emulator) behaves as the API description says, rule by rule')
      .option('--module <name>', `existing module the scratch tables are made in (required with an upstream; default scratch for the embedded emulator)`)
      .option('--rate <n>', `requests per second at most, 0 = unbounded (default ${DEFAULT_RATE} against an upstream, unbounded against the embedded emulator)`, rate)
      .option('--only <prefix>', 'run only the checks whose id starts with this (repeatable), e.g. records. or record-changes.paging', collect)
      .option('--json', 'print the report as JSON on stdout')
      .option('--time-limit <minutes>', `the run stops itself (deleting its tables) after this long; other runs delete its leftovers only once it is past (default ${DEFAULT_TIME_LIMIT_MINUTES})`, minutes)
      .option('--dry-run', 'list the checks and the scratch tables they would create, and send nothing'),
  ).action(async (flags: ConformanceFlags) => {
    const [suite, { conformanceEndpoint, EMBEDDED_MODULE }, { handleShutdownSignals }, { displayBaseUrl }] = await Promise.all([
      import('../../conformance/index.ts'),
      import('../conformance-endpoint.ts'),
      import('../../daemon/shutdown.ts'),
      import('../../client/base-url.ts'),
    ]);
    const checks = flags.only === undefined ? suite.ALL_CHECKS : suite.ALL_CHECKS.filter((c) => flags.only!.some((p) => c.id.startsWith(p)));
    if (checks.length === 0) throw new UsageError(`--only ${flags.only!.join(', ')}: no check id starts with that (wsmirror conformance --dry-run lists them)`);
    const out = (line: string) => process.stdout.write(`${line}\n`);
    const timeLimitMs = (flags.timeLimit ?? DEFAULT_TIME_LIMIT_MINUTES) * 60_000;

    if (flags.dryRun) {
      const plan = suite.planConformance(flags.module ?? EMBEDDED_MODULE, checks, timeLimitMs);
      if (flags.json) {
        out(JSON.stringify(plan));
        return;
      }
      out(`wsmirror conformance --dry-run: run ${plan.runId} would first delete scratch tables of earlier runs that have ended (${plan.leftoverPattern}), then:`);
      for (const c of plan.checks) out(`  ${c.kind === 'rule' ? 'check' : 'note '} ${c.id}${c.creates.length === 0 ? '' : `: creates and deletes ${c.creates.join(', ')}`}`);
      return;
    }

    const endpoint = await conformanceEndpoint(flags, flags.module);
    const stopping = new AbortController();
    const removeSignalHandlers = handleShutdownSignals({ onSignal: (signal) => stopping.abort(new Error(`stopped by ${signal}`)) });
    try {
      if (!flags.json) {
        const where = endpoint.kind === 'embedded' ? `an embedded emulator (${endpoint.target.baseUrl}); set WSMIRROR_BASE_URL, WSMIRROR_API_KEY and WSMIRROR_WORKSPACE_ID to check another endpoint` : displayBaseUrl(endpoint.target.baseUrl);
        out(`wsmirror conformance: ${where}, workspace ${endpoint.target.workspaceId}, module ${endpoint.module}`);
      }
      const report = await suite.runConformance({
        target: endpoint.target,
        module: endpoint.module,
        rate: flags.rate ?? (endpoint.kind === 'embedded' ? 0 : DEFAULT_RATE),
        checks,
        signal: stopping.signal,
        timeLimitMs,
        ...(flags.json ? {} : { onResult: (r) => out(suite.resultLines(r).join('\n')) }),
      }).catch((error: unknown) => {
        if (error instanceof suite.ConformanceSetupError) throw new ConfigError(error.message);
        throw error;
      });
      if (flags.json) out(JSON.stringify(report));
      else for (const line of suite.summaryLines(report)) out(line);
      process.exitCode = report.failed === 0 && !report.interrupted && report.cleanupFailures.length === 0 ? EXIT.ok : EXIT.syncFailed;
    } finally {
      removeSignalHandlers();
      await endpoint.close();
    }
  });
}
