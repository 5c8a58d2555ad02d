import pg from 'pg';
import { MirrorError } from '../errors.ts';

/**
 * The text of a compiled statement with its bind parameters (`$1`, `$2`…) written in as literals,
 * so that several statements can go to the server as one simple query: one round trip instead of
 * one per statement. Placeholders inside quoted identifiers and string literals are left alone;
 * statements that hold what this does not read (dollar quotes, escape strings, comments) are
 * refused rather than guessed at, as are values without a literal form here.
 */
export function inlineParameters(sqlText: string, parameters: readonly unknown[]): string {
  let out = '';
  let i = 0;
  while (i < sqlText.length) {
    const c = sqlText[i]!;
    // Outside quotes: a dollar quote, an escape string or a comment would hide placeholders.
    const pair = c + (sqlText[i + 1] ?? '');
    if (pair === '$$' || pair === '--' || pair === '/*' || ((pair === "E'" || pair === "e'") && !/\w/.test(sqlText[i - 1] ?? ' '))) {
      throw new MirrorError(`cannot inline the parameters of: ${sqlText.slice(0, 80)}`);
    }
    if (c === "'" || c === '"') {
      // A quoted run, with its doubled quotes, copied as it is.
      let end = i + 1;
      for (;;) {
        end = sqlText.indexOf(c, end);
        if (end === -1) throw new MirrorError(`unterminated ${c} in: ${sqlText.slice(0, 80)}`);
        if (sqlText[end + 1] === c) end += 2;
        else break;
      }
      out += sqlText.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    const placeholder = c === '$' ? /^\$(\d+)/.exec(sqlText.slice(i, i + 12)) : null;
    if (placeholder) {
      const n = Number(placeholder[1]);
      if (n < 1 || n > parameters.length) throw new MirrorError(`no parameter ${placeholder[0]} for: ${sqlText.slice(0, 80)}`);
      out += literal(parameters[n - 1]);
      i += placeholder[0].length;
      continue;
    }
    out += c;
    i += 1;
  }
  return out;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  // Negative numbers in parentheses: `x - $1` must not become the comment `x --1`.
  if (typeof value === 'number' && Number.isFinite(value)) return value < 0 ? `(${value})` : String(value);
  if (typeof value === 'bigint') return value < 0n ? `(${value})` : String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  throw new MirrorError(`no literal for a parameter of type ${typeof value}`);
}
