import * as z from 'zod';
import { metaSchema, pageInfoSchema } from './common.ts';
import { objectIdSchema, recordIdSchema } from './identifiers.ts';
import { timestampSchema } from './timestamp.ts';

/** Known kinds of schema change; readers must tolerate others (the spec leaves them open). */
export const SCHEMA_CHANGE_KINDS = ['Module', 'Table', 'Field'] as const;
export const SCHEMA_CHANGE_ACTIONS = ['upserted', 'deleted'] as const;
/** Known record change types; readers treat any other as `update`. */
export const RECORD_CHANGE_TYPES = ['create', 'update', 'delete'] as const;

export const schemaChangeSchema = z.object({
  id: objectIdSchema,
  kind: z.string().meta({ description: `One of ${SCHEMA_CHANGE_KINDS.join(', ')}.` }),
  action: z.string().meta({ description: `One of ${SCHEMA_CHANGE_ACTIONS.join(', ')}.` }),
  changedAt: timestampSchema,
});
export type SchemaChange = z.infer<typeof schemaChangeSchema>;

export const recordChangeSchema = z.object({
  id: recordIdSchema,
  changeType: z.string().meta({ description: `One of ${RECORD_CHANGE_TYPES.join(', ')}.` }),
  changedAt: timestampSchema,
});
export type RecordChange = z.infer<typeof recordChangeSchema>;

export function changesPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: metaSchema, page_info: pageInfoSchema });
}
export const schemaChangesPageSchema = changesPageSchema(schemaChangeSchema);
export const recordChangesPageSchema = changesPageSchema(recordChangeSchema);
export type ChangesPage<T> = { data: T[]; meta: { asOf: string }; page_info: { has_more: boolean; limit: number; offset: number } };
