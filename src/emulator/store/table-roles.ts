import type { EmulatorContext } from '../context.ts';
import { ForbiddenError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { TableRow } from './schema-rows.ts';

/**
 * The role lists of modules and tables, applied to records requests: the module's `openRoles`
 * for any of them, then the table's `readRoles` (list, changes), `createRoles`, `writeRoles`
 * (update) or `deleteRoles`. `admin` passes every list: lists restrict the other roles.
 */
/**
 * The role a key acts with, for `userRole()`: the API leaves open how roles relate to keys. A key
 * with every grant is `admin`; otherwise a grant `role:NAME` names it, and `editor` is the default.
 */
export function roleOf(actor: ApiKeyGrant): string {
  if (actor.grants === 'all') return 'admin';
  const grant = actor.grants.find((g) => g.startsWith('role:'));
  const role = grant === undefined ? 'editor' : grant.slice('role:'.length);
  return role === 'user' ? 'editor' : role; // `user` is the deprecated alias of `editor`

}

/** Who writes when no API key does (the seed loader): every grant, role admin. */
export const SYSTEM_ACTOR: ApiKeyGrant = { key: '(system)', grants: 'all' };

export type RecordAction = 'read' | 'create' | 'write' | 'delete';

const LIST: Record<RecordAction, 'readRoles' | 'createRoles' | 'writeRoles' | 'deleteRoles'> = {
  read: 'readRoles', create: 'createRoles', write: 'writeRoles', delete: 'deleteRoles',
};

export function allowsRole(roles: readonly string[] | undefined, role: string): boolean {
  return role === 'admin' || roles === undefined || roles.includes(role);
}

/** Why the role may not act on the table's records, or undefined when the lists allow it. */
export function tableRoleRefusal(ctx: EmulatorContext, table: TableRow, role: string, action: RecordAction): string | undefined {
  if (role === 'admin') return undefined;
  const module = ctx.schema.requireModule(table.moduleName);
  if (!allowsRole(module.props.openRoles, role)) {
    return `role ${role} may not open module ${module.name} (openRoles: ${(module.props.openRoles ?? []).join(', ')})`;
  }
  const list = LIST[action];
  const roles = table.props[list];
  if (!allowsRole(roles, role)) {
    return `role ${role} may not ${action} records of table ${table.moduleName}.${table.name} (${list}: ${(roles ?? []).join(', ')})`;
  }
  return undefined;
}

export function requireTableRole(ctx: EmulatorContext, table: TableRow, actor: ApiKeyGrant, action: RecordAction): void {
  const refusal = tableRoleRefusal(ctx, table, roleOf(actor), action);
  if (refusal !== undefined) throw new ForbiddenError(refusal);
}
