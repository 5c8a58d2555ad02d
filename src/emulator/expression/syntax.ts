import type { Position } from './diagnostics.ts';
import type { FunctionDefinition } from './functions.ts';
import type { FieldInfo, TableScope } from './scope.ts';

/**
 * The syntax tree the parser builds. Every node keeps the position of the token it starts at (for
 * a binary operation: its operator), which is where its errors point. The checker fills the
 * `resolved` slots with what a name stands for; the evaluator runs only checked trees.
 */

export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '=' | '!=' | '<' | '<=' | '>' | '>=' | 'and' | 'or';

export type Node =
  | { readonly kind: 'number'; readonly value: number; readonly at: Position }
  | { readonly kind: 'text'; readonly value: string; readonly at: Position }
  | { readonly kind: 'boolean'; readonly value: boolean; readonly at: Position }
  | { readonly kind: 'null'; readonly at: Position }
  | { readonly kind: 'this'; readonly at: Position }
  /** A bare name: a field of the record in scope (inside `where`: of the candidate record). */
  | { readonly kind: 'field'; readonly name: string; readonly at: Position; resolved?: FieldInfo }
  /** `record.name`: a field of a record value (`this`, an element of a `select`). */
  | { readonly kind: 'member'; readonly object: Node; readonly name: string; readonly at: Position; resolved?: FieldInfo }
  | { readonly kind: 'negate'; readonly operand: Node; readonly at: Position }
  | { readonly kind: 'not'; readonly operand: Node; readonly at: Position }
  | { readonly kind: 'binary'; readonly op: BinaryOperator; readonly left: Node; readonly right: Node; readonly at: Position }
  | { readonly kind: 'if'; readonly condition: Node; readonly then: Node; readonly otherwise: Node; readonly at: Position }
  | { readonly kind: 'call'; readonly name: string; readonly args: readonly Node[]; readonly at: Position; resolved?: FunctionDefinition }
  | {
      readonly kind: 'select';
      readonly table: string;
      readonly tableAt: Position;
      readonly where: Node | undefined;
      readonly at: Position;
      resolved?: TableScope;
    };

export interface Assignment {
  /** `name := …` or `this.name := …`. */
  readonly target: string;
  readonly targetAt: Position;
  readonly value: Node;
  resolved?: FieldInfo;
}

/** An expression (defaults, function fields, choices, guards) or a trigger's assignments. */
export type Program =
  | { readonly kind: 'expression'; readonly body: Node }
  | { readonly kind: 'trigger'; readonly assignments: readonly Assignment[] };

export type ProgramKind = Program['kind'];
