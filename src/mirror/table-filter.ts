import type { Workspace } from '../api/workspace.ts';
import { ConfigError } from '../errors.ts';

/**
 * Which upstream tables are mirrored: `module.table` must match an include pattern (or none are
 * given) and no exclude pattern. Patterns are `module.table` globs of a-z, 0-9 and _, where `*`
 * matches any run of characters and `?` one character; `*` alone matches every table. The
 * configuration checks patterns with `isTablePattern`, the schema planner compiles them here.
 */
export interface TableFilter {
  include?: readonly string[];
  exclude?: readonly string[];
  /** Where each list was set (a variable, a file), for messages about its patterns. */
  sources?: { readonly include?: string; readonly exclude?: string };
}

const TABLE_PATTERN = /^(?:\*|[a-z0-9_*?]+\.[a-z0-9_*?]+)$/;

/** What a valid pattern looks like, for error messages. */
export const TABLE_PATTERN_RULE = 'a table pattern such as crm.* or sales.orders (module.table, wildcards * and ?)';

export function isTablePattern(text: string): boolean {
  return TABLE_PATTERN.test(text);
}

function compile(pattern: string, where: string): RegExp {
  if (!isTablePattern(pattern)) throw new ConfigError(`${where}: ${JSON.stringify(pattern)} is not ${TABLE_PATTERN_RULE}`);
  // The pattern alphabet holds no regex syntax but `.`, `*` and `?`.
  const body = pattern.replace(/\./g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

function compileList(filter: TableFilter, list: 'include' | 'exclude'): { pattern: string; re: RegExp }[] {
  return (filter[list] ?? []).map((pattern, i) => ({ pattern, re: compile(pattern, `${list}[${i}]`) }));
}

/** Compiles a filter once; throws ConfigError naming a malformed pattern (`include[2]: …`). */
export function compileTableFilter(filter: TableFilter = {}): (moduleName: string, tableName: string) => boolean {
  const include = compileList(filter, 'include').map((p) => p.re);
  const exclude = compileList(filter, 'exclude').map((p) => p.re);
  return (moduleName, tableName) => {
    const name = `${moduleName}.${tableName}`;
    if (include.length > 0 && !include.some((re) => re.test(name))) return false;
    return !exclude.some((re) => re.test(name));
  };
}

/** A pattern of `tables.include` or `tables.exclude` that matches no upstream table. */
export interface UnmatchedPattern {
  setting: 'tables.include' | 'tables.exclude';
  pattern: string;
  /** Where the list was set: a variable, or a configuration file's path. */
  source?: string;
}

/**
 * The patterns that match none of the workspace's tables (`module.table`), in the order
 * configured: most likely typos, and one in include drops the tables it was meant to keep. `*`
 * alone is left out: it matches nothing only in an empty workspace, which is no mistake.
 */
export function unmatchedPatterns(filter: TableFilter, workspace: Workspace): UnmatchedPattern[] {
  const names = workspace.modules.flatMap((m) => m.tables.map((t) => `${m.name}.${t.name}`));
  const unmatched: UnmatchedPattern[] = [];
  for (const list of ['include', 'exclude'] as const) {
    for (const { pattern, re } of compileList(filter, list)) {
      if (pattern === '*' || names.some((name) => re.test(name))) continue;
      const source = filter.sources?.[list];
      unmatched.push({ setting: `tables.${list}`, pattern, ...(source === undefined ? {} : { source }) });
    }
  }
  return unmatched;
}

/** The warning about one unmatched pattern, in the words `check` and the daemon's log share. */
export function describeUnmatchedPattern(unmatched: UnmatchedPattern): string {
  const effect = unmatched.setting === 'tables.include' ? 'nothing is mirrored through it' : 'it excludes nothing';
  // A variable is named as it is, a file as `set in FILE`; a default names nothing.
  const { source } = unmatched;
  const where = source === undefined || source === 'default' ? '' : ` (${source.startsWith('WSMIRROR_') ? source : `set in ${source}`})`;
  return `${unmatched.setting} pattern ${JSON.stringify(unmatched.pattern)}${where} matches no upstream table: ${effect}`;
}
