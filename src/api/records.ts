import { z } from 'zod';
import { pageInfoSchema } from './common.ts';
import { NAME_PATTERN, recordIdInputSchema, recordIdSchema } from './identifiers.ts';
import { MAX_PAGE_LIMIT, intQueryParam } from './paging.ts';

/** Records create and update payloads: at most 6 MB (taken as 6 MiB, 6,291,456 bytes). */
export const RECORDS_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;
/** CSV import files: at most 50 MB (taken as 50 MiB). */
export const CSV_FILE_LIMIT_BYTES = 50 * 1024 * 1024;

/** A filter value: one scalar, or an array meaning "any of". */
export const filterScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const filterSchema = z.record(
  z.string().regex(NAME_PATTERN, 'filter keys must be field names (or id)'),
  z.union([filterScalarSchema, z.array(filterScalarSchema)]),
);
export type RecordFilter = z.infer<typeof filterSchema>;

const jsonFilterParam = z.string().transform((text, ctx) => {
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
  fields: z
    .string()
    .meta({ description: 'Comma-separated field names to include.' })
    .transform((s) => s.split(',').map((f) => f.trim()).filter((f) => f !== ''))
    .optional(),
  filter: jsonFilterParam
    .meta({ description: 'JSON object of field name (or `id`) to a value, or to an array of values meaning "any of".' })
    .optional(),
  limit: intQueryParam(1, MAX_PAGE_LIMIT).optional(),
  offset: intQueryParam(0).optional(),
  sort: z
    .string()
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


export const recordCreateBodySchema = z.strictObject({
  records: z.array(recordValuesSchema).min(1, 'records must hold at least 1 record'),
});
export const recordUpdateBodySchema = z.strictObject({
  records: z
    .array(recordValuesSchema.and(z.object({ id: recordIdInputSchema })))
    .min(1, 'records must hold at least 1 record'),
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
