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

/** Compiles a filter once; throws ConfigError naming a malformed pattern (`include[2]: …`). */
export function compileTableFilter(filter: TableFilter = {}): (moduleName: string, tableName: string) => boolean {
  const include = (filter.include ?? []).map((p, i) => compile(p, `include[${i}]`));
  const exclude = (filter.exclude ?? []).map((p, i) => compile(p, `exclude[${i}]`));
  return (moduleName, tableName) => {
    const name = `${moduleName}.${tableName}`;
    if (include.length > 0 && !include.some((re) => re.test(name))) return false;
    return !exclude.some((re) => re.test(name));
  };
}
