import * as z from 'zod';
import { timestampSchema } from './timestamp.ts';

/** Map of locale key to label; the empty-string key carries the base label. */
export const labelsSchema = z.record(z.string(), z.string());

/**
 * A label map in a request. The key `__proto__` is refused: it is no locale code, and a record
 * schema would drop it without a word (and leave its value unchecked), since on a plain object it
 * names the prototype. Every other key is a locale key, its label a string.
 */
function labelsInput(label: z.ZodString) {
  return z.preprocess((value, ctx) => {
    // Reached only where labels are required (an optional one stops at undefined before).
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', input: value, message: 'required: an object of locale key to label, e.g. {"": "Name"}' });
      return z.NEVER;
    }
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], input: value, message: '"__proto__" is not a locale key' });
      return z.NEVER;
    }
    return value;
  }, z.record(z.string(), label));
}

/** Labels in table and option requests and in the admin surface's module body. */
export const labelsInputSchema = labelsInput(z.string());

/** Labels in field requests: each label 1 to 100 characters. */
export const requestLabelsSchema = labelsInput(
  z.string().min(1, 'each label must be 1 to 100 characters').max(100, 'each label must be 1 to 100 characters'),
);

export const hexColorSchema = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a hex color #rrggbb');

export const iconSchema = z.object({
  color: z.string(),
  filling: z.number(),
  icon: z.string(),
});
export const iconInputSchema = z.strictObject({
  color: hexColorSchema.optional(),
  filling: z.number().finite().optional(),
  icon: z.string().optional(),
});

export const pageInfoSchema = z.object({
  has_more: z.boolean(),
  limit: z.number(),
  offset: z.number(),
});
export type PageInfo = z.infer<typeof pageInfoSchema>;

export const metaSchema = z.object({ asOf: timestampSchema });

export const errorBodySchema = z.object({ error: z.object({ message: z.string() }) });
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** `{ data: T }` */
export function dataOf<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}
