/**
 * SQLite before 3.48 takes at most 127 arguments in a function call (SQLITE_MAX_FUNCTION_ARG;
 * 1000 since), and an older SQLite that meets one call with more in a trigger or view of a file
 * reads the whole file as malformed. Tools bundle such SQLite (Debian's sqlite3 and Python,
 * Metabase, Grafana): the SQL the mirror stores in the file calls no function with more.
 */
export const MAX_FUNCTION_ARGS = 127;

/**
 * `json_array(v1, v2, …)` of any number of values, as SQL that calls no function with more than
 * MAX_FUNCTION_ARGS arguments: the first values in `json_array`, the others appended in order by
 * `json_insert(…, '$[#]', v, '$[#]', w, …)` (`$[#]`, the end of an array, since SQLite 3.31).
 * The same JSON text as one `json_array` call.
 */
export function jsonArraySql(values: readonly string[]): string {
  let out = `json_array(${values.slice(0, MAX_FUNCTION_ARGS).join(', ')})`;
  const pairs = Math.floor((MAX_FUNCTION_ARGS - 1) / 2);
  for (let i = MAX_FUNCTION_ARGS; i < values.length; i += pairs) {
    out = `json_insert(${out}, ${values.slice(i, i + pairs).map((v) => `'$[#]', ${v}`).join(', ')})`;
  }
  return out;
}
