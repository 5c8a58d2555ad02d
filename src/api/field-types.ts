import * as z from 'zod';

/** Every type a field in a response can have. */
export const FIELD_TYPES = [
  'any', 'appointment', 'boolean', 'choice', 'color', 'date', 'dchoice', 'dmulti', 'file',
  'function', 'html', 'icon', 'lambda', 'multi', 'number', 'react', 'reference', 'reverse',
  'rowId', 'string', 'styled', 'time', 'timeinterval', 'timestamp', 'unknown', 'user', 'void',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const fieldTypeSchema = z.enum(FIELD_TYPES);

/** Types a caller can create; the rest are internal. */
export const CREATABLE_FIELD_TYPES = [
  'string', 'html', 'number', 'boolean', 'choice', 'dchoice', 'multi', 'dmulti', 'file', 'date',
  'timestamp', 'time', 'timeinterval', 'appointment', 'icon', 'color', 'user', 'reference',
  'reverse', 'function',
] as const satisfies readonly FieldType[];
export type CreatableFieldType = (typeof CREATABLE_FIELD_TYPES)[number];
export const creatableFieldTypeSchema = z.enum(CREATABLE_FIELD_TYPES, {
  error: (issue) =>
    `invalid field type ${JSON.stringify(issue.input)}; creatable types are ${CREATABLE_FIELD_TYPES.join(', ')}`,
});

/** Variants of `string` fields accepted in requests. */
export const STRING_VARIANTS = ['multiline-text', 'text', 'phone', 'email', 'url', 'location', 'signature'] as const;

/** Types whose values are computed by the service: never written by callers. */
export const READ_ONLY_FIELD_TYPES: readonly FieldType[] = ['function', 'lambda', 'reverse', 'rowId', 'void'];

/** Types that reject a `canWrite` guard (spec, rules for creating fields, 6). */
export const NO_CAN_WRITE_TYPES: readonly FieldType[] = ['function', 'lambda', 'reverse', 'rowId', 'void'];

/** Types whose `options` is an array of Option objects. */
export const CHOICE_TYPES: readonly FieldType[] = ['choice', 'multi'];

/** Types whose `options` is a selection expression. */
export const DYNAMIC_CHOICE_TYPES: readonly FieldType[] = ['dchoice', 'dmulti'];

/** Types that reference another table through `refTableName`. */
export const REFERENCE_TYPES: readonly FieldType[] = ['reference', 'reverse'];

export function isReadOnlyType(type: FieldType): boolean {
  return READ_ONLY_FIELD_TYPES.includes(type);
}
