import type { ConformanceCheck } from './check.ts';
import { ALL_CHECKS } from './checks/index.ts';
import { DEFAULT_TIME_LIMIT_MS } from './run-suite.ts';
import { SCRATCH_PREFIX, newRunId, scratchName } from './scratch.ts';

export interface PlannedCheck {
  id: string;
  kind: ConformanceCheck['kind'];
  rule: string;
  /** `module.table` of each scratch table it creates (and deletes). */
  creates: string[];
}

/** What a run would do, without a request: `--dry-run`. */
export function planConformance(
  module: string, checks: readonly ConformanceCheck[] = ALL_CHECKS, timeLimitMs = DEFAULT_TIME_LIMIT_MS,
  // Without a request there is no endpoint time: this machine's clock stands in for the plan.
  runId = newRunId(Date.now() + timeLimitMs),
): {
  runId: string;
  leftoverPattern: string;
  checks: PlannedCheck[];
} {
  return {
    runId,
    leftoverPattern: `${module}.${SCRATCH_PREFIX}<10 characters a-z0-9>_*`,
    checks: checks.map((c) => ({ id: c.id, kind: c.kind, rule: c.rule, creates: c.scratchTables.map((t) => `${module}.${scratchName(runId, t)}`) })),
  };
}
