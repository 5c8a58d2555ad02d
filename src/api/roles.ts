import * as z from 'zod';

/** `user` is a deprecated alias for `editor`. */
export const ROLES = ['admin', 'editor', 'user'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** Role lists in field requests: 1 to 3 items. */
export const fieldRolesSchema = z.array(roleSchema).min(1).max(3);

/** Role lists of tables and modules (no count limit is stated). */
export const rolesSchema = z.array(z.string());

/** Grants an API key can carry. Only `schema:manage-permissions` has a meaning in the spec. */
export const GRANT_MANAGE_PERMISSIONS = 'schema:manage-permissions';
