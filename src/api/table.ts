import * as z from 'zod';
import { iconInputSchema, iconSchema, labelsInputSchema, labelsSchema } from './common.ts';
import { fieldSchema } from './field.ts';
import { objectIdSchema, tableNameSchema } from './identifiers.ts';
import { rolesSchema } from './roles.ts';

export const tableSchema = z.object({
  id: objectIdSchema,
  name: z.string(),
  labels: labelsSchema.optional(),
  icon: iconSchema.optional(),
  fields: z.array(fieldSchema).optional(),
  hasFiles: z.boolean().optional(),
  hasGlobalSearch: z.boolean().optional(),
  hasHistory: z.boolean().optional(),
  isEmailLinkingEnabled: z.boolean().optional(),
  isHidden: z.boolean().optional(),
  createRoles: rolesSchema.optional(),
  deleteRoles: rolesSchema.optional(),
  readRoles: rolesSchema.optional(),
  writeRoles: rolesSchema.optional(),
});
export type Table = z.infer<typeof tableSchema>;

const tableFlags = {
  labels: labelsInputSchema.optional(),
  icon: iconInputSchema.optional(),
  hasFiles: z.boolean().optional(),
  hasGlobalSearch: z.boolean().optional(),
  hasHistory: z.boolean().optional(),
  isEmailLinkingEnabled: z.boolean().optional(),
  isHidden: z.boolean().optional(),
};

/** POST .../tables: `name` is required, everything else optional. */
export const tableCreateSchema = z.strictObject({ name: tableNameSchema, ...tableFlags });
export type TableCreate = z.infer<typeof tableCreateSchema>;

const tableRoles = z.array(z.enum(['admin', 'editor', 'user']));

/** PATCH .../tables/{tableName}: every property optional; `name` renames. */
export const tablePatchSchema = z.strictObject({
  name: tableNameSchema.optional(),
  ...tableFlags,
  createRoles: tableRoles.optional(),
  deleteRoles: tableRoles.optional(),
  readRoles: tableRoles.optional(),
  writeRoles: tableRoles.optional(),
});
export type TablePatch = z.infer<typeof tablePatchSchema>;
