import { ForbiddenError } from '../errors.ts';
import { MANAGE_PERMISSIONS, hasGrant, type ApiKeyGrant } from '../options.ts';

/**
 * Who may change who may do what. The API asks the grant `schema:manage-permissions` for setting a
 * field's guards and other permission properties; the emulator asks it for every setting that
 * decides access: a field's guards and role lists, a table's role lists. A key without it gets 403
 * (the API leaves the status open).
 */

/** 403 unless the key holds the grant; `what` says what needed it. */
export function requirePermissionGrant(actor: ApiKeyGrant, where: string, what: string): void {
  if (hasGrant(actor, MANAGE_PERMISSIONS)) return;
  throw new ForbiddenError(`${where}: ${what} needs the grant ${MANAGE_PERMISSIONS}, which this API key lacks`);
}

/** 403 when a request item sets one of `properties` (`null` too) and the key lacks the grant. */
export function requireGrantForProperties(actor: ApiKeyGrant, item: object, properties: readonly string[], where: string): void {
  for (const property of properties) {
    if ((item as Record<string, unknown>)[property] !== undefined) {
      requirePermissionGrant(actor, `${where}.${property}`, `setting ${property}`);
    }
  }
}
