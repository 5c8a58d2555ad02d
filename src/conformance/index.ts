// The conformance suite: the API description's black-box checks, run against any endpoint.
export { runConformance, ConformanceSetupError } from './run-suite.ts';
export type { CheckResult, ConformanceOptions, ConformanceReport, FailureDetail } from './run-suite.ts';
export { ALL_CHECKS } from './checks/index.ts';
export type { ConformanceCheck } from './check.ts';
export { planConformance } from './plan.ts';
export type { PlannedCheck } from './plan.ts';
export { resultLines, summaryLines } from './report-text.ts';
export type { EndpointTarget } from './probe.ts';
