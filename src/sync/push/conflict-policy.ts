import { compileTableFilter } from '../../mirror/table-filter.ts';

/**
 * What happens to a local edit of a field that was also changed upstream since the edit was made
 * (upstream's value is neither the value before the edit nor the edited value):
 * - `local-wins`: the local value is sent and replaces upstream's;
 * - `upstream-wins`: the local edit is dropped and upstream's value comes back into the mirror;
 * - `manual`: the edit is marked conflict and waits for `wsmirror outbox retry` (local wins
 *   then) or `discard` (upstream wins).
 */
export const CONFLICT_POLICIES = ['local-wins', 'upstream-wins', 'manual'] as const;
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

export interface ConflictPolicyRule {
  /** `module.table` pattern, as in `tables.include`. */
  pattern: string;
  policy: ConflictPolicy;
}

/** The policy of each table: the first rule whose pattern matches, else the default. */
export function compileConflictPolicies(
  fallback: ConflictPolicy,
  rules: readonly ConflictPolicyRule[],
): (moduleName: string, tableName: string) => ConflictPolicy {
  const compiled = rules.map((rule) => ({ matches: compileTableFilter({ include: [rule.pattern] }), policy: rule.policy }));
  return (moduleName, tableName) => compiled.find((r) => r.matches(moduleName, tableName))?.policy ?? fallback;
}
