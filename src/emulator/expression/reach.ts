import type { FieldInfo, TableScope } from './scope.ts';
import type { Node, Program } from './syntax.ts';

/**
 * What a checked program reaches: the fields it reads (bare names, `.name` of a record or a list
 * of records), the tables it selects, and the fields a trigger assigns. The store asks it who may
 * set an expression: one that reaches guarded data is a permission setting.
 */
export interface Reach {
  readonly reads: readonly FieldInfo[];
  readonly selects: readonly TableScope[];
  readonly writes: readonly FieldInfo[];
}

export function reachOf(program: Program): Reach {
  const reach = { reads: [] as FieldInfo[], selects: [] as TableScope[], writes: [] as FieldInfo[] };
  if (program.kind === 'trigger') {
    for (const a of program.assignments) {
      if (a.resolved) reach.writes.push(a.resolved);
      walk(a.value, reach);
    }
  } else {
    walk(program.body, reach);
  }
  return reach;
}

function walk(node: Node, reach: { reads: FieldInfo[]; selects: TableScope[] }): void {
  switch (node.kind) {
    case 'field':
      if (node.resolved) reach.reads.push(node.resolved);
      return;
    case 'member':
      if (node.resolved) reach.reads.push(node.resolved);
      walk(node.object, reach);
      return;
    case 'negate': case 'not':
      walk(node.operand, reach);
      return;
    case 'binary':
      walk(node.left, reach);
      walk(node.right, reach);
      return;
    case 'if':
      walk(node.condition, reach);
      walk(node.then, reach);
      walk(node.otherwise, reach);
      return;
    case 'call':
      for (const arg of node.args) walk(arg, reach);
      return;
    case 'select':
      if (node.resolved) reach.selects.push(node.resolved);
      if (node.where) walk(node.where, reach);
      return;
    default:
      return;
  }
}
