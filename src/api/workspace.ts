import * as z from 'zod';
import { iconSchema, labelsSchema } from './common.ts';
import { objectIdSchema } from './identifiers.ts';
import { rolesSchema } from './roles.ts';
import { tableSchema } from './table.ts';

export const moduleSchema = z.object({
  id: objectIdSchema,
  name: z.string(),
  labels: labelsSchema.optional(),
  icon: iconSchema.optional(),
  isHidden: z.boolean().optional(),
  hideNavigation: z.boolean().optional(),
  openRoles: rolesSchema.optional(),
  tables: z.array(tableSchema),
});
export type Module = z.infer<typeof moduleSchema>;

export const workspaceSchema = z.object({
  name: z.string(),
  modules: z.array(moduleSchema),
});
export type Workspace = z.infer<typeof workspaceSchema>;
