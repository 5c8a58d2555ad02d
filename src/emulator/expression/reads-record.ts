import type { Node, Program } from './syntax.ts';

/**
 * Whether an expression depends on the record it runs for (`this`, or a bare field name outside a
 * select's where). One that does not — `select customers where active` — gives the same value for
 * every record of a request, so it is evaluated once.
 */
export function readsRecord(program: Program): boolean {
  if (program.kind === 'trigger') return true;
  return reads(program.body, false);
}

function reads(node: Node, inWhere: boolean): boolean {
  switch (node.kind) {
    case 'this': return true;
    case 'field': return !inWhere;
    case 'member': return reads(node.object, inWhere);
    case 'negate': case 'not': return reads(node.operand, inWhere);
    case 'binary': return reads(node.left, inWhere) || reads(node.right, inWhere);
    case 'if': return reads(node.condition, inWhere) || reads(node.then, inWhere) || reads(node.otherwise, inWhere);
    case 'call': return node.args.some((a) => reads(a, inWhere)) || node.name === 'userRole';
    case 'select': return node.where !== undefined && reads(node.where, true);
    default: return false;
  }
}
