import type { ExpressionError } from '../../api/index.ts';

/**
 * Where a token starts in an expression's text (1-based line and column, columns counting UTF-16
 * code units as JavaScript strings do) and the problems the language reports. Parse and check
 * problems are returned as data (`ExpressionError`, the API's shape); a runtime failure is thrown
 * as an EvaluationError carrying the same three properties.
 */
export interface Position {
  readonly line: number;
  readonly column: number;
}

export function diagnostic(at: Position, message: string): ExpressionError {
  return { line: at.line, column: at.column, message };
}

/** `line 2, column 7: unknown field price` — the form used in 400 messages. */
export function describeDiagnostic(d: ExpressionError): string {
  return `line ${d.line}, column ${d.column}: ${d.message}`;
}

/** A failure while evaluating: a runtime type error, a division by zero, an exhausted budget. */
export class EvaluationError extends Error {
  readonly line: number;
  readonly column: number;
  constructor(at: Position, message: string) {
    super(message);
    this.name = 'EvaluationError';
    this.line = at.line;
    this.column = at.column;
  }

  toDiagnostic(): ExpressionError {
    return { line: this.line, column: this.column, message: this.message };
  }
}
