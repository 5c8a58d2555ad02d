import type { EmulatorContext } from '../context.ts';
import { reachOf } from '../expression/reach.ts';
import { MANAGE_PERMISSIONS, hasGrant, type ApiKeyGrant } from '../options.ts';
import { ModuleTables, tableScope, type StoreFieldInfo, type StoreTableScope } from './expression-scope.ts';
import { requirePermissionGrant } from './permission-grant.ts';
import type { TableRow } from './schema-rows.ts';
import { compileField, type Checked } from './table-expressions.ts';
import { allowsRole, roleOf, tableRoleRefusal } from './table-roles.ts';

/**
 * Triggers (`onUpdate`) and defaults (`defaultValue`, literal or `{ $nx }`) store what they give,
 * and run with the access of whoever fires them: a trigger set by one key runs on another key's
 * update. So one set by a key without the permission grant may reach only what that key may
 * itself: write no field with a write guard (`canWrite`, or `writeRoles` that leave its role out),
 * read no field hidden from its role (`canRead`, `readRoles`) and select no table its role may not
 * read. Anything further decides who gets to write or read what, so it needs the grant (403).
 */

/** A field a request saved, and which of its stored effects the request set. */
export interface SavedEffects {
  readonly key: number;
  /** The request item, for messages: `body`, `body[2]`. */
  readonly where: string;
  readonly onUpdate: boolean;
  readonly defaultValue: boolean;
}

/** Checked after the request's writes, against the table as they leave it (inside its transaction). */
export function requireGrantForStoredEffects(
  ctx: EmulatorContext, actor: ApiKeyGrant, table: TableRow, saved: readonly SavedEffects[],
): void {
  if (hasGrant(actor, MANAGE_PERMISSIONS) || saved.every((s) => !s.onUpdate && !s.defaultValue)) return;
  const role = roleOf(actor);
  const rows = ctx.schema.fieldsOf(table.key);
  const scope = tableScope(table, rows);
  const tables = new ModuleTables(ctx, table.moduleName, [scope]);
  for (const s of saved) {
    const field = scope.fields.find((f) => f.row.key === s.key)!;
    const compiled = compileField(field, scope, tables);
    const refuse = (property: string, what: string) => requirePermissionGrant(actor, `${s.where}.${property}`, what);
    if (s.defaultValue) {
      const guard = writeGuard(field, role);
      if (guard !== undefined) refuse('defaultValue', `a default of field ${field.name}, which has a write guard (${guard}),`);
      const beyond = compiled.defaultValue && readBeyond(ctx, compiled.defaultValue, role);
      if (beyond) refuse('defaultValue', `a default that ${beyond},`);
    }
    if (s.onUpdate && compiled.onUpdate) {
      for (const target of reachOf(compiled.onUpdate.program).writes) {
        const guard = writeGuard(target as StoreFieldInfo, role);
        if (guard !== undefined) refuse('onUpdate', `a trigger that writes field ${target.name}, which has a write guard (${guard}),`);
      }
      const beyond = readBeyond(ctx, compiled.onUpdate, role);
      if (beyond) refuse('onUpdate', `a trigger that ${beyond},`);
    }
  }
}

/** The write guard of a field that may refuse the role, in words; undefined when there is none. */
function writeGuard(field: StoreFieldInfo, role: string): string | undefined {
  const props = field.row.props;
  if (props.canWrite !== undefined) return 'canWrite';
  if (!allowsRole(props.writeRoles, role)) return `writeRoles: ${props.writeRoles!.join(', ')}`;
  return undefined;
}

/** The first field or table the expression reads that the role may not read, in words. */
function readBeyond(ctx: EmulatorContext, compiled: Checked, role: string): string | undefined {
  const reach = reachOf(compiled.program);
  for (const table of reach.selects) {
    const refusal = tableRoleRefusal(ctx, (table as StoreTableScope).row, role, 'read');
    if (refusal !== undefined) return `reads table ${table.name} (${refusal})`;
  }
  for (const field of reach.reads) {
    const props = (field as StoreFieldInfo).row.props;
    if (!allowsRole(props.readRoles, role)) {
      return `reads field ${field.name}, which role ${role} may not read (readRoles: ${props.readRoles!.join(', ')})`;
    }
    if (props.canRead !== undefined) return `reads field ${field.name}, which has a read guard (canRead)`;
  }
  return undefined;
}
