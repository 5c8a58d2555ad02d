import { diagnostic, type Position } from './diagnostics.ts';
import type { ExpressionError } from '../../api/index.ts';

/**
 * Splits an expression's text into tokens, each with the position of its first character. Names
 * are `[A-Za-z_][A-Za-z0-9_]*` or any text between backticks (for field names that start with a
 * digit or are keywords); strings use double or single quotes with backslash escapes.
 */

export const KEYWORDS = [
  'and', 'or', 'not', 'if', 'then', 'else', 'end', 'true', 'false', 'null', 'this', 'select', 'where',
] as const;
export type Keyword = (typeof KEYWORDS)[number];

export const OPERATORS = [':=', '!=', '<=', '>=', '+', '-', '*', '/', '%', '=', '<', '>', '(', ')', ',', '.', ';'] as const;
export type Operator = (typeof OPERATORS)[number];

export type Token =
  | { readonly kind: 'number'; readonly value: number; readonly at: Position }
  | { readonly kind: 'string'; readonly value: string; readonly at: Position }
  | { readonly kind: 'name'; readonly value: string; readonly at: Position }
  | { readonly kind: 'keyword'; readonly value: Keyword; readonly at: Position }
  | { readonly kind: 'operator'; readonly value: Operator; readonly at: Position }
  | { readonly kind: 'end-of-input'; readonly at: Position };

export type LexResult = { ok: true; tokens: Token[] } | { ok: false; error: ExpressionError };

const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", '`': '`' };

export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'end-of-input': return 'the end of the expression';
    case 'string': return `the text ${JSON.stringify(token.value)}`;
    case 'number': return `the number ${token.value}`;
    case 'name': return `the name ${token.value}`;
    default: return `"${token.value}"`;
  }
}

export function tokenize(source: string): LexResult {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const here = (): Position => ({ line, column: i - lineStart + 1 });
  const fail = (at: Position, message: string): LexResult => ({ ok: false, error: diagnostic(at, message) });

  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    const at = here();
    if (c >= '0' && c <= '9') {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i, i + 400))!;
      const value = Number(m[0]);
      if (!Number.isFinite(value)) return fail(at, `the number ${m[0]} is too large`);
      if (/^[A-Za-z_]/.test(source.slice(i + m[0].length, i + m[0].length + 1))) {
        return fail(at, `a name cannot start with a digit: write \`${/^[A-Za-z0-9_]+/.exec(source.slice(i, i + 200))![0]}\` in backticks`);
      }
      tokens.push({ kind: 'number', value, at });
      i += m[0].length;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i, i + 200))!;
      const word = m[0];
      tokens.push(KEYWORD_SET.has(word) ? { kind: 'keyword', value: word as Keyword, at } : { kind: 'name', value: word, at });
      i += word.length;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let text = '';
      i++;
      for (;;) {
        if (i >= source.length) {
          return fail(at, c === '`' ? 'this quoted name is not closed: add a `' : `this text is not closed: add a ${c}`);
        }
        const d = source[i]!;
        if (d === c) {
          i++;
          break;
        }
        if (d === '\n') {
          if (c === '`') return fail(at, 'a quoted name cannot span lines');
          text += d;
          i++;
          line++;
          lineStart = i;
          continue;
        }
        if (d === '\\') {
          const e = source[i + 1];
          const escaped = e === undefined ? undefined : ESCAPES[e];
          if (escaped === undefined) {
            const escapeAt = here();
            return fail(escapeAt, `unknown escape \\${e ?? ''}: use \\" \\' \\\` \\\\ \\n \\t or \\r`);
          }
          text += escaped;
          i += 2;
          continue;
        }
        text += d;
        i++;
      }
      if (c === '`') {
        if (text === '') return fail(at, 'a quoted name cannot be empty');
        tokens.push({ kind: 'name', value: text, at });
      } else {
        tokens.push({ kind: 'string', value: text, at });
      }
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i));
    if (op === undefined) return fail(at, `unexpected character ${JSON.stringify(c)}`);
    tokens.push({ kind: 'operator', value: op, at });
    i += op.length;
  }
  tokens.push({ kind: 'end-of-input', at: here() });
  return { ok: true, tokens };
}
