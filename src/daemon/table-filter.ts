import type { TablesConfig } from './config-schema.ts';

/**
 * Which upstream tables are mirrored: `module.table` must match an `include` pattern and no
 * `exclude` pattern. `*` matches any run of characters, `?` one character, so `crm.*` is every
 * table of module crm, `*.audit_log` that table in every module, and `*` everything.
 */
export function createTableFilter(tables: TablesConfig): (moduleName: string, tableName: string) => boolean {
  const include = tables.include.map(globToRegExp);
  const exclude = tables.exclude.map(globToRegExp);
  return (moduleName, tableName) => {
    const name = `${moduleName}.${tableName}`;
    return include.some((re) => re.test(name)) && !exclude.some((re) => re.test(name));
  };
}

function globToRegExp(pattern: string): RegExp {
  const body = [...pattern]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}
