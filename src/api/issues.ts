import type * as z from 'zod';

/**
 * Turns zod issues into one readable line that names each place at fault, e.g.
 * `body.records[2].price: expected a finite number`. Shared by every part that validates
 * external input (API bodies, queries, config files, CLI flags).
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = ''): string {
  return issues.map((issue) => describeIssue(issue, root)).join('; ');
}

function describeIssue(issue: z.core.$ZodIssue, root: string): string {
  const where = formatPath(root, issue.path);
  if (issue.code === 'invalid_union' && isDefaultMessage(issue.message)) {
    // Report the branch that got furthest: the one whose first issue has the longest path, and
    // among equals one whose input had the right type (its message says what is wrong with the value).
    const best = [...issue.errors].sort((a, b) => depth(b) - depth(a) || typeMismatch(a) - typeMismatch(b))[0];
    if (best && best.length > 0) {
      return best.map((i) => describeIssue({ ...i, path: [...issue.path, ...i.path] }, root)).join('; ');
    }
  }
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
    return `${where}: unknown propert${issue.keys.length === 1 ? 'y' : 'ies'} ${keys}`;
  }
  return `${where}: ${issue.message}`;
}

function depth(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

function typeMismatch(issues: readonly z.core.$ZodIssue[]): number {
  return issues.every((i) => i.code === 'invalid_type') ? 1 : 0;
}

function isDefaultMessage(message: string): boolean {
  return message === 'Invalid input';
}

export function formatPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(root)' : out;
}
