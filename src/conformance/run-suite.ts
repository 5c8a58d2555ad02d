import type { EndpointName } from '../api/index.ts';
import { CheckFailure, type CheckContext, type ConformanceCheck } from './check.ts';
import { ALL_CHECKS } from './checks/index.ts';
import { Probe, type EndpointTarget, type Exchange, type ProbeRequest } from './probe.ts';
import { EPOCH } from './checks/fixtures.ts';
import { expectOk } from './expectations.ts';
import {
  ScratchDeclarationError, ScratchTables, deleteScratchTables, listTableNames, newRunId, runHasEnded, scratchName, type SweepResult,
} from './scratch.ts';

export interface ConformanceOptions {
  target: EndpointTarget;
  /** An existing module: every scratch table is made in it. */
  module: string;
  /** Requests per second at most; 0 = unbounded. */
  rate: number;
  /** Default: every check. */
  checks?: readonly ConformanceCheck[];
  /** Stops the run between two requests; the scratch tables are still deleted. */
  signal?: AbortSignal;
  /** Called as each check ends (a progress line per check). */
  onResult?: (result: CheckResult) => void;
  /** Called once leftovers of earlier runs are gone, before the first check. */
  onLeftovers?: (sweep: SweepResult) => void;
  /** The run stops itself (as if interrupted) after this long. Default 60 minutes. */
  timeLimitMs?: number;
}

/** What a failed check shows: the rule's words, the request, the expected and the actual. */
export interface FailureDetail {
  message: string;
  expected?: string;
  actual?: string;
  request?: { method: string; target: string; body?: string };
  status?: number;
}

export interface CheckResult {
  id: string;
  section: string;
  rule: string;
  outcome: 'pass' | 'fail' | 'observation';
  durationMs: number;
  failure?: FailureDetail;
  observation?: { observed: string; emulatorChoice: string; asEmulator: boolean };
}

export interface ConformanceReport {
  runId: string;
  module: string;
  workspaceId: string;
  results: CheckResult[];
  passed: number;
  failed: number;
  observations: number;
  /** Set when a signal, or the time limit, stopped the run before every check ran. */
  interrupted: boolean;
  /** Set when the time limit stopped the run. */
  timeLimitReached: boolean;
  /** Scratch tables of earlier runs that have ended, removed before the first check. */
  leftoversRemoved: string[];
  /** Scratch tables of other runs that may still be going on, left alone. */
  otherRunsKept: string[];
  /** Scratch tables that could not be deleted at the end (should be empty). */
  cleanupFailures: { name: string; error: string }[];
  requests: number;
  rateLimited: number;
}

/** A problem that stops the run before any check: the module is missing, the key is refused. */
export class ConformanceSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceSetupError';
  }
}

// Cleanup runs after an interruption too: it gets its own time, not the stopped run's signal.
const CLEANUP_TIMEOUT_MS = 120_000;
export const DEFAULT_TIME_LIMIT_MS = 60 * 60_000;

/**
 * Runs the checks one after another against the endpoint. First removes the scratch tables of
 * runs that have ended (see scratch.ts: a run's id says when it ends by); after each check deletes
 * that check's tables; at the end (also when stopped) deletes whatever of this run is still there.
 * Scratch tables of runs that may still be going on are never touched, so runs may overlap.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const timeLimitMs = options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
  // Started before the endpoint's time is read: the run stops before the end its id states.
  const timeLimit = AbortSignal.timeout(timeLimitMs);
  const stop = options.signal ? AbortSignal.any([options.signal, timeLimit]) : timeLimit;
  const probe = new Probe(options.target, { rate: options.rate });
  let start: Preflight;
  try {
    start = await preflight(probe, options.module, stop);
  } catch (error) {
    await probe.close();
    throw error;
  }
  const runId = newRunId(start.nowMs + timeLimitMs);
  const report: ConformanceReport = {
    runId, module: options.module, workspaceId: probe.workspaceId, results: [], passed: 0, failed: 0, observations: 0,
    interrupted: false, timeLimitReached: false, leftoversRemoved: [], otherRunsKept: [], cleanupFailures: [], requests: 0, rateLimited: 0,
  };
  try {
    const leftovers = await deleteScratchTables(probe, options.module, start.tableNames, (id) => runHasEnded(id, start.nowMs), stop);
    report.leftoversRemoved = leftovers.deleted;
    report.otherRunsKept = leftovers.kept;
    report.cleanupFailures.push(...leftovers.failed);
    options.onLeftovers?.(leftovers);
    for (const check of options.checks ?? ALL_CHECKS) {
      if (stop.aborted) break;
      const result = await runCheck(check, probe, options.module, runId, stop);
      if (result === 'interrupted') break;
      report.results.push(result);
      report[result.outcome === 'pass' ? 'passed' : result.outcome === 'fail' ? 'failed' : 'observations']++;
      options.onResult?.(result);
    }
  } finally {
    report.interrupted = stop.aborted;
    report.timeLimitReached = timeLimit.aborted;
    try {
      const cleanup = AbortSignal.timeout(CLEANUP_TIMEOUT_MS);
      const last = await deleteScratchTables(probe, options.module, await listTableNames(probe, options.module, cleanup), (id) => id === runId, cleanup);
      report.cleanupFailures.push(...last.failed);
    } catch (error) {
      report.cleanupFailures.push({ name: scratchName(runId, '*'), error: error instanceof Error ? error.message : String(error) });
    }
    report.requests = probe.stats.requests;
    report.rateLimited = probe.stats.rateLimited;
    await probe.close();
  }
  return report;
}

interface Preflight {
  /** The endpoint's time: `meta.asOf` of a one-item schema-changes poll. */
  nowMs: number;
  /** The module's tables: the leftover sweep works from this list. */
  tableNames: string[];
}

/**
 * The key must be accepted and the module must exist; anything else is no check's fault. Reads
 * the endpoint's time (its clock, not this machine's, dates the run: see scratch.ts) and lists
 * the module's tables once.
 */
async function preflight(probe: Probe, module: string, signal: AbortSignal): Promise<Preflight> {
  const send = async <N extends EndpointName>(endpoint: N, request: ProbeRequest): Promise<Exchange<N>> => {
    try {
      return await probe.send(endpoint, request, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ConformanceSetupError(`the endpoint cannot be reached: ${probe.redact(error instanceof Error ? error.message : String(error))}`);
    }
  };
  const poll = await send('listSchemaChanges', { query: { since: EPOCH, limit: 1 } });
  if (poll.status === 401) throw new ConformanceSetupError('the endpoint refused the API key (HTTP 401)');
  const res = await send('listTables', { params: { moduleName: module } });
  if (res.status === 401) throw new ConformanceSetupError('the endpoint refused the API key (HTTP 401)');
  if (res.status === 404) throw new ConformanceSetupError(`--module ${module}: the workspace has no module of that name (HTTP 404); name an existing module to create the scratch tables in`);
  if (res.status < 200 || res.status > 299) throw new ConformanceSetupError(`listing the tables of module ${module} answered HTTP ${res.status}`);
  const asOf = poll.status >= 200 && poll.status < 300 ? (poll.body as { meta?: { asOf?: unknown } } | undefined)?.meta?.asOf : undefined;
  const nowMs = typeof asOf === 'string' ? Date.parse(asOf) : NaN;
  if (!Number.isFinite(nowMs)) {
    throw new ConformanceSetupError(`the endpoint's time could not be read: GET ${poll.target} answered HTTP ${poll.status} without a meta.asOf timestamp (the run is dated by it)`);
  }
  try {
    return { nowMs, tableNames: expectOk(res, `listing the tables of module ${module} succeeds`).data.map((t) => t.name) };
  } catch (error) {
    throw new ConformanceSetupError(`listing the tables of module ${module}: ${probe.redact(error instanceof Error ? `${error.message}: ${(error as { actual?: string }).actual ?? ''}` : String(error))}`);
  }
}

async function runCheck(
  check: ConformanceCheck, probe: Probe, module: string, runId: string, signal: AbortSignal,
): Promise<CheckResult | 'interrupted'> {
  const sendAny = <N extends EndpointName>(endpoint: N, request: ProbeRequest = {}) =>
    probe.send(endpoint, { ...request, params: { moduleName: module, ...request.params } }, signal);
  const scratch = new ScratchTables(sendAny, module, runId, check.scratchTables);
  const send = <N extends EndpointName>(endpoint: N, request: ProbeRequest = {}) => {
    // A table the check did not declare is refused before anything is sent (the suite's own bug).
    scratch.guard(endpoint, request);
    return sendAny(endpoint, request);
  };
  const ctx: CheckContext = { module, scratch, missingName: scratch.missingName, send };
  const started = performance.now();
  const base = { id: check.id, section: check.section, rule: check.rule };
  let result: CheckResult;
  try {
    const observed = await check.run(ctx);
    // Declared tables it never made would make --dry-run list what a run does not do.
    const unmade = scratch.unmade();
    if (unmade.length > 0) throw new ScratchDeclarationError(`the check declares scratch tables it never created: ${unmade.join(', ')} (its scratchTables must list exactly what it creates)`);
    result = observed
      ? { ...base, outcome: 'observation', durationMs: 0, observation: { ...observed, observed: probe.redact(observed.observed), emulatorChoice: check.emulatorChoice ?? '' } }
      : { ...base, outcome: 'pass', durationMs: 0 };
  } catch (error) {
    // Its tables go in the run's last sweep, which lists the module by this run's prefix.
    if (signal.aborted) return 'interrupted';
    result = { ...base, outcome: 'fail', durationMs: 0, failure: failureDetail(error, probe) };
  }
  try {
    await scratch.removeAll();
  } catch (error) {
    // The last sweep retries it; a check that passed still says its tables would not go.
    if (result.outcome !== 'fail') result = { ...base, outcome: 'fail', durationMs: 0, failure: failureDetail(error, probe) };
  }
  result.durationMs = Math.round(performance.now() - started);
  return result;
}

/** What a failed check reports; an endpoint that echoes the key back never gets it printed. */
function failureDetail(error: unknown, probe: Probe): FailureDetail {
  const r = (text: string) => probe.redact(text);
  if (error instanceof CheckFailure) {
    const ex = error.exchange;
    return {
      message: r(error.message), expected: r(error.expected), actual: r(error.actual),
      ...(ex ? { request: { method: ex.method, target: r(ex.target), ...(ex.requestBody === undefined ? {} : { body: r(ex.requestBody) }) }, status: ex.status } : {}),
    };
  }
  return { message: r(error instanceof Error ? error.message : String(error)) };
}
