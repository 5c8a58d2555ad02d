import { ConfigError } from '../errors.ts';

/**
 * Which upstream tables are mirrored. Patterns are `module.table` globs where `*` matches any run
 * of characters; a pattern without a dot names a whole module (`crm` = `crm.*`). A table is
 * mirrored when it matches an include pattern (or none are given) and no exclude pattern.
 */
export interface TableFilter {
  include?: readonly string[];
  exclude?: readonly string[];
}

const PATTERN = /^[a-z0-9_*]+(\.[a-z0-9_*]+)?$/;

function compile(pattern: string, where: string): RegExp {
  if (!PATTERN.test(pattern)) {
    throw new ConfigError(
      `${where}: ${JSON.stringify(pattern)} is not a table pattern; expected module.table with a-z, 0-9, _ and * (e.g. crm.* or *.orders)`,
    );
  }
  const full = pattern.includes('.') ? pattern : `${pattern}.*`;
  const body = full.split('*').map((part) => part.replace(/\./g, '\\.')).join('.*');
  return new RegExp(`^${body}$`);
}

/** Compiles a filter once; throws ConfigError naming a malformed pattern. */
export function compileTableFilter(filter: TableFilter = {}): (moduleName: string, tableName: string) => boolean {
  const include = (filter.include ?? []).map((p, i) => compile(p, `include[${i}]`));
  const exclude = (filter.exclude ?? []).map((p, i) => compile(p, `exclude[${i}]`));
  return (moduleName, tableName) => {
    const name = `${moduleName}.${tableName}`;
    if (include.length > 0 && !include.some((re) => re.test(name))) return false;
    return !exclude.some((re) => re.test(name));
  };
}
