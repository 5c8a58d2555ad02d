import * as z from 'zod';
import { pageInfoSchema } from './common.ts';
import { NAME_PATTERN, recordIdInputSchema, recordIdSchema, type RecordIdInput } from './identifiers.ts';
import { MAX_PAGE_LIMIT, intQueryParam, queryText } from './paging.ts';

/** Records create and update payloads: at most 6 MB (taken as 6 MiB, 6,291,456 bytes). */
export const RECORDS_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;
/** CSV import files: at most 50 MB (taken as 50 MiB). */
export const CSV_FILE_LIMIT_BYTES = 50 * 1024 * 1024;

/** A filter value: one scalar, or an array meaning "any of". */
export const filterScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const filterValueSchema = z.union([filterScalarSchema, z.array(filterScalarSchema)]);
export type RecordFilter = Record<string, z.infer<typeof filterValueSchema>>;

/**
 * Checked key by key rather than with z.record, which drops a `__proto__` key: that is a valid
 * field name, and a filter that lost it would match every record. The output has a null
 * prototype, so a field name never reaches Object.prototype.
 */
export const filterSchema = z
  .custom<RecordFilter>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'expected a JSON object')
  .transform((input, ctx) => {
    const out: RecordFilter = Object.create(null);
    for (const [key, value] of Object.entries(input)) {
      if (!NAME_PATTERN.test(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'filter keys must be field names (or id)' });
        continue;
      }
      const parsed = filterValueSchema.safeParse(value);
      if (parsed.success) out[key] = parsed.data;
      else ctx.addIssue({ code: 'custom', path: [key], message: 'expected a value or an array of values' });
    }
    return out;
  });

const jsonFilterParam = queryText('filter', 'a JSON object of field name to value').transform((text, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'filter must be a JSON object of field name to value' });
    return z.NEVER;
  }
  const result = filterSchema.safeParse(parsed);
  if (!result.success) {
    ctx.addIssue({ code: 'custom', message: `filter must be a JSON object of field name to a value or an array of values` });
    return z.NEVER;
  }
  return result.data;
});

/** GET .../records query. `sort` is a field name (or `id`), prefixed with `-` for descending. */
export const recordListQuerySchema = z.strictObject({
  fields: queryText('fields', 'comma-separated field names')
    .meta({ description: 'Comma-separated field names to include.' })
    .transform((s) => s.split(',').map((f) => f.trim()).filter((f) => f !== ''))
    .optional(),
  filter: jsonFilterParam
    .meta({ description: 'JSON object of field name (or `id`) to a value, or to an array of values meaning "any of".' })
    .optional(),
  limit: intQueryParam(1, MAX_PAGE_LIMIT).optional(),
  offset: intQueryParam(0).optional(),
  sort: queryText('sort', 'a field name or id, optionally prefixed with -')
    .regex(/^-?[a-z0-9_]+$/, 'sort must be a field name or id, optionally prefixed with - for descending')
    .optional(),
});
export type RecordListQuery = z.output<typeof recordListQuerySchema>;

/**
 * A flat object of field name to value. Checked as a plain object without copying it: record
 * values are the bulk of every list page and body, and a copy per record would double the work
 * of reading them. Values are checked per field type where their field is known.
 */
export const recordValuesSchema = z
  .custom<Record<string, unknown>>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'expected an object of field name to value',
  )
  .meta({ type: 'object', additionalProperties: {}, description: 'Field name to value.' });

export const recordSchema = z.object({ id: recordIdSchema, values: recordValuesSchema });
export type ApiRecord = z.infer<typeof recordSchema>;
export const recordListResponseSchema = z.object({ data: z.array(recordSchema), page_info: pageInfoSchema });
export type RecordListResponse = z.infer<typeof recordListResponseSchema>;


export const recordCreateBodySchema = z.strictObject({
  records: z.array(recordValuesSchema).min(1, 'records must hold at least 1 record'),
});
/**
 * A record of an update body: `id` plus the values to change. Refined in place rather than
 * intersected with an `{ id }` object: an intersection builds a merged copy, which drops a
 * `__proto__` key (a valid field name).
 */
const recordUpdateSchema = z
  .custom<Record<string, unknown> & { id: RecordIdInput }>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'expected an object of field name to value',
  )
  .superRefine((record, ctx) => {
    const id = recordIdInputSchema.safeParse(record.id);
    if (!id.success) ctx.addIssue({ code: 'custom', path: ['id'], message: id.error.issues[0]?.message ?? 'invalid record id' });
  })
  .meta({ type: 'object', properties: { id: {} }, required: ['id'], additionalProperties: {}, description: 'Record id and the field values to change.' });

export const recordUpdateBodySchema = z.strictObject({
  records: z.array(recordUpdateSchema).min(1, 'records must hold at least 1 record'),
});
export const recordDeleteBodySchema = z.strictObject({
  records: z.array(recordIdInputSchema).min(1, 'records must hold at least 1 id'),
});

export const recordCreateResponseSchema = z.object({ data: z.object({ ids: z.array(recordIdSchema) }) });
export const recordUpdateResponseSchema = z.object({ data: z.object({ updatedIds: z.array(recordIdSchema) }) });
export const recordDeleteResponseSchema = z.object({ data: z.object({ deletedIds: z.array(recordIdSchema) }) });

export const csvImportResponseSchema = z.object({
  data: z.object({ rowsImported: z.number(), rowsSkipped: z.number(), rowsUpdated: z.number() }),
});
