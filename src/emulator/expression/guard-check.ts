/**
 * Pre-save check of a `canRead`/`canWrite` guard. The expression language is a later issue;
 * until it lands, "compiles" means: not blank, string literals closed, parentheses balanced,
 * and no reference to a field that is not in scope yet (the field being created). The
 * expression issue replaces this module with a real parse.
 */
const KEYWORDS = new Set([
  'and', 'or', 'not', 'if', 'then', 'else', 'end', 'true', 'false', 'null', 'this', 'select', 'where',
]);

/** Returns why the guard does not compile, or undefined when it does. */
export function checkGuard(source: string, notInScope: readonly string[] = []): string | undefined {
  if (source.trim() === '') return 'the guard expression is blank';
  const depth: number[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '"' || c === "'") {
      const start = i;
      i++;
      while (i < source.length && source[i] !== c) i += source[i] === '\\' ? 2 : 1;
      if (i >= source.length) return `unterminated string starting at column ${start + 1}`;
      i++;
      continue;
    }
    if (c === '(') depth.push(i);
    else if (c === ')') {
      if (depth.pop() === undefined) return `unexpected ) at column ${i + 1}`;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      const word = m[0];
      const afterDot = i > 0 && source[i - 1] === '.';
      const isCall = /^\s*\(/.test(source.slice(i + word.length));
      const viaThis = afterDot && /this\s*\.$/.test(source.slice(0, i));
      if ((!afterDot || viaThis) && !isCall && !KEYWORDS.has(word) && notInScope.includes(word)) {
        return `the guard refers to field ${word}, which is not in scope yet: set the guard by a later update`;
      }
      i += word.length;
      continue;
    }
    i++;
  }
  if (depth.length > 0) return `unclosed ( at column ${depth[depth.length - 1]! + 1}`;
  return undefined;
}
