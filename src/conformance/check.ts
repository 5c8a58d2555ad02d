import type { EndpointName } from '../api/index.ts';
import type { Exchange, ProbeRequest } from './probe.ts';
import type { ScratchTables } from './scratch.ts';

/**
 * One check of the suite. Its `id` names the rule of the API description it tests
 * (`records.update.transactional`), `rule` quotes or paraphrases that rule, and `section` is the
 * heading of the description it comes from. A `rule` check passes or fails; an `observation`
 * check looks at something the description leaves open ("not shown") and reports what the
 * endpoint did next to the emulator's documented choice, never failing for it.
 */
export interface ConformanceCheck {
  id: string;
  section: string;
  rule: string;
  kind: 'rule' | 'observation';
  /** For observations: the emulator's choice, as docs/emulator.md states it. */
  emulatorChoice?: string;
  /** Suffixes of the scratch tables it creates (for `--dry-run`). */
  scratchTables: readonly string[];
  run(ctx: CheckContext): Promise<void | Observed>;
}

/** What an observation check saw. */
export interface Observed {
  observed: string;
  /** Whether it is what the emulator does. */
  asEmulator: boolean;
}

/** What a check works with: the probe bound to the module, and its scratch tables. */
export interface CheckContext {
  readonly module: string;
  readonly scratch: ScratchTables;
  /** A name no table of the module has: for 404 checks. */
  readonly missingName: string;
  /** Sends a request with `moduleName` filled in (unless `params` gives another). */
  send<N extends EndpointName>(endpoint: N, request?: ProbeRequest): Promise<Exchange<N>>;
}

export { CheckFailure } from './check-failure.ts';

export function defineCheck(check: Omit<ConformanceCheck, 'kind' | 'scratchTables'> & Partial<Pick<ConformanceCheck, 'kind' | 'scratchTables'>>): ConformanceCheck {
  return { kind: 'rule', scratchTables: [], ...check };
}
