import * as z from 'zod';
import { hexColorSchema, labelsInputSchema, labelsSchema, requestLabelsSchema } from './common.ts';
import {
  CHOICE_TYPES, DYNAMIC_CHOICE_TYPES, NO_CAN_WRITE_TYPES, REFERENCE_TYPES, STRING_VARIANTS,
  creatableFieldTypeSchema, fieldTypeSchema,
} from './field-types.ts';
import { fieldNameSchema, objectIdSchema, tableNameSchema } from './identifiers.ts';
import { fieldRolesSchema, rolesSchema } from './roles.ts';

// ---- options -------------------------------------------------------------------------------

/** An option of a `choice`/`multi` field as the service returns it. */
export const optionSchema = z.object({
  id: objectIdSchema,
  name: z.string(),
  order: z.number().int(),
  labels: labelsSchema.optional(),
  color: z.string().optional(),
  textColor: z.string().optional(),
  icon: z.string().optional(),
});
export type Option = z.infer<typeof optionSchema>;

/** An option in a request: no `id` for a new option, the stable `id` for one to keep. */
export const optionInputSchema = z.strictObject({
  id: objectIdSchema.optional(),
  name: z.string().min(1, 'option name must not be empty'),
  order: z.number().int().min(0, 'option order must be 0 or more').optional(),
  labels: labelsInputSchema.optional(),
  color: hexColorSchema.optional(),
  textColor: hexColorSchema.optional(),
  icon: z.string().optional(),
});
export type OptionInput = z.infer<typeof optionInputSchema>;

export const expressionErrorSchema = z.object({
  line: z.number(),
  column: z.number(),
  message: z.string(),
});
export type ExpressionError = z.infer<typeof expressionErrorSchema>;

/** `{ $nx: <expression> }`, a literal, or an array of option ids. */
export const defaultValueSchema = z.union([
  z.strictObject({ $nx: z.string().min(1) }),
  z.array(z.string()),
  z.boolean(),
  z.number().finite(),
  z.string(),
  z.null(),
]);

// ---- responses -----------------------------------------------------------------------------

export const fieldSchema = z.object({
  id: objectIdSchema,
  name: z.string(),
  type: fieldTypeSchema,
  labels: labelsSchema.optional(),
  variant: z.string().optional(),
  required: z.boolean().optional(),
  unique: z.boolean().optional(),
  index: z.boolean().optional(),
  search: z.boolean().optional(),
  defaultValue: z.unknown().optional(),
  onUpdate: z.string().optional(),
  options: z.union([z.array(optionSchema), z.string()]).optional(),
  optionName: z.string().optional(),
  optionIcon: z.string().optional(),
  optionColor: z.string().optional(),
  expression: z.string().optional(),
  expressionErrors: z.array(expressionErrorSchema).optional(),
  refTableId: z.string().optional(),
  readRoles: rolesSchema.optional(),
  writeRoles: rolesSchema.optional(),
  canRead: z.string().optional(),
  canWrite: z.string().optional(),
  syncedFrom: z.string().optional(),
  binding: z.string().optional(),
});
export type Field = z.infer<typeof fieldSchema>;

// ---- create --------------------------------------------------------------------------------

const guardSchema = z.string().min(1, 'a guard expression must not be empty');

/** Properties a field takes alike on create and on update. */
const fieldSettingsShape = {
  required: z.boolean().optional(),
  unique: z.boolean().optional(),
  index: z.boolean().optional(),
  search: z.boolean().optional(),
  defaultValue: defaultValueSchema.optional(),
  onUpdate: z.string().optional(),
  options: z.union([z.array(optionInputSchema), z.string().min(1)]).optional(),
  optionName: z.string().optional(),
  optionIcon: z.string().optional(),
  optionColor: z.string().optional(),
  expression: z.string().optional(),
};

export const fieldCreateSchema = z
  .strictObject({
    labels: requestLabelsSchema,
    name: fieldNameSchema,
    type: creatableFieldTypeSchema,
    variant: z.enum(STRING_VARIANTS).optional(),
    ...fieldSettingsShape,
    refTableName: tableNameSchema.nullable().optional(),
    showInTable: z.boolean().optional(),
    readRoles: fieldRolesSchema.optional(),
    writeRoles: fieldRolesSchema.optional(),
    canRead: guardSchema.optional(),
    canWrite: guardSchema.optional(),
  })
  .superRefine((f, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    const choice = CHOICE_TYPES.includes(f.type);
    const dynamic = DYNAMIC_CHOICE_TYPES.includes(f.type);
    if (f.options !== undefined) {
      if (Array.isArray(f.options) && !choice) issue('options', `an options array is only for choice and multi fields, not ${f.type}`);
      if (typeof f.options === 'string' && !dynamic) issue('options', `an options expression is only for dchoice and dmulti fields, not ${f.type}`);
    } else if (dynamic) {
      issue('options', `options (the selection expression) is required for ${f.type} fields`);
    }
    for (const key of ['optionName', 'optionIcon', 'optionColor'] as const) {
      if (f[key] !== undefined && !dynamic) issue(key, `${key} is only for dchoice and dmulti fields, not ${f.type}`);
    }
    if (f.type === 'function' && f.expression === undefined) issue('expression', 'expression is required for function fields');
    if (f.expression !== undefined && f.type !== 'function') issue('expression', `expression is only for function fields, not ${f.type}`);
    if (f.variant !== undefined && f.type !== 'string') issue('variant', `variant is only for string fields, not ${f.type}`);
    if (REFERENCE_TYPES.includes(f.type)) {
      if (!f.refTableName) issue('refTableName', `refTableName is required for ${f.type} fields`);
    } else if (f.refTableName) {
      issue('refTableName', `refTableName is only for reference and reverse fields, not ${f.type}`);
    }
    if (f.canWrite !== undefined && NO_CAN_WRITE_TYPES.includes(f.type)) {
      issue('canWrite', `canWrite is not accepted for ${f.type} fields`);
    }
    if (Array.isArray(f.options)) {
      const names = new Set<string>();
      for (const o of f.options) {
        if (o.id !== undefined) issue('options', 'new options must not carry an id');
        if (names.has(o.name)) issue('options', `duplicate option name ${JSON.stringify(o.name)}`);
        names.add(o.name);
      }
    }
  });
export type FieldCreate = z.infer<typeof fieldCreateSchema>;

export const fieldBatchCreateSchema = z.array(fieldCreateSchema).min(1, 'the batch must hold at least 1 field');

// ---- update --------------------------------------------------------------------------------

const fieldUpdateShape = {
  name: fieldNameSchema.optional(),
  labels: requestLabelsSchema.optional(),
  ...fieldSettingsShape,
  readRoles: fieldRolesSchema.optional(),
  writeRoles: fieldRolesSchema.optional(),
  canRead: guardSchema.nullable().optional(),
  canWrite: guardSchema.nullable().optional(),
};

/** Body of PATCH .../fields/{fieldName}. */
export const fieldUpdateSchema = z.strictObject(fieldUpdateShape);
export type FieldUpdate = z.infer<typeof fieldUpdateSchema>;

/** One item of PATCH .../fields/batch. */
export const fieldBatchUpdateItemSchema = z.strictObject({ fieldName: fieldNameSchema, ...fieldUpdateShape });
export type FieldBatchUpdateItem = z.infer<typeof fieldBatchUpdateItemSchema>;

export const fieldBatchUpdateSchema = z
  .array(fieldBatchUpdateItemSchema)
  .min(1, 'the batch must hold at least 1 field update');

export const fieldBatchDeleteSchema = z.strictObject({
  fieldNames: z.array(fieldNameSchema).min(1, 'fieldNames must hold at least 1 name'),
});

/** Properties of an update that need the `schema:manage-permissions` grant. */
export const PERMISSION_PROPERTIES = ['canRead', 'canWrite', 'readRoles', 'writeRoles'] as const;
