import type { ExpressionError } from '../../api/index.ts';
import { check, type CheckOptions } from './checker.ts';
import { parse } from './parser.ts';
import type { ExpressionScope, ValueType } from './scope.ts';
import type { Program, ProgramKind } from './syntax.ts';

/** Parse and check in one step: a program ready to evaluate, or every problem found. */
export type Compiled =
  | { readonly ok: true; readonly program: Program; readonly type: ValueType }
  | { readonly ok: false; readonly errors: readonly ExpressionError[] };

export function compile(source: string, kind: ProgramKind, scope: ExpressionScope, options: CheckOptions = {}): Compiled {
  const parsed = parse(source, kind);
  if (!parsed.ok) return { ok: false, errors: [parsed.error] };
  const checked = check(parsed.program, scope, options);
  if (checked.errors.length > 0) return { ok: false, errors: checked.errors };
  return { ok: true, program: parsed.program, type: checked.type };
}
