import * as z from 'zod';
import { fieldNameSchema } from './identifiers.ts';

/**
 * The form parts of `POST …/records/import/csv` other than `file`. Multipart parts are text, so
 * every part is a string here and the schema's output is the typed, defaulted options. The
 * emulator validates a request's parts with it; the CLI validates its flags with it (they are
 * text too), and the client sends the typed options back as these strings.
 */

export const CSV_IMPORT_MODES = ['append', 'update', 'upsert'] as const;
export type CsvImportMode = (typeof CSV_IMPORT_MODES)[number];

/** `us`: `1,234.5`; `eu`: `1.234,5` (also `1 234,5`). */
export const CSV_NUMBER_FORMATS = ['us', 'eu'] as const;
export type CsvNumberFormat = (typeof CSV_NUMBER_FORMATS)[number];

export const CSV_ENCODINGS = ['utf8', 'utf16le', 'latin1'] as const;
export type CsvEncoding = (typeof CSV_ENCODINGS)[number];

/**
 * `overwrite` (default): the cell's value is written, an empty cell clears the field on update.
 * `ignoreEmpty`: on update an empty cell leaves the stored value alone. `key`: the column
 * identifies the record to update (update and upsert); key columns are written on create only.
 */
export const CSV_UPDATE_POLICIES = ['overwrite', 'ignoreEmpty', 'key'] as const;
export type CsvUpdatePolicy = (typeof CSV_UPDATE_POLICIES)[number];

export const CSV_BATCH_SIZE_DEFAULT = 100;
export const CSV_BATCH_SIZE_MAX = 10_000;

const ENCODING_NAMES: Record<string, CsvEncoding> = {
  utf8: 'utf8', 'utf-8': 'utf8', utf16le: 'utf16le', 'utf-16le': 'utf16le', latin1: 'latin1', 'iso-8859-1': 'latin1',
};

export const csvMappingSchema = z.strictObject({
  csvColumnName: z.string().min(1, 'csvColumnName must name a column'),
  fieldName: fieldNameSchema,
  updatePolicy: z.enum(CSV_UPDATE_POLICIES, { error: `updatePolicy must be one of ${CSV_UPDATE_POLICIES.join(', ')}` }).optional(),
});
export type CsvMapping = z.output<typeof csvMappingSchema>;

const mappingsArraySchema = z
  .array(csvMappingSchema)
  .min(1, 'mappings must hold at least 1 mapping')
  .superRefine((mappings, ctx) => {
    const seen = new Map<string, number>();
    mappings.forEach((m, i) => {
      const first = seen.get(m.fieldName);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i, 'fieldName'], message: `field ${m.fieldName} is mapped twice (also mappings[${first}])` });
      } else seen.set(m.fieldName, i);
    });
  });

const mappingsPart = z.preprocess((text, ctx) => {
  try {
    return JSON.parse(String(text)) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON array of { csvColumnName, fieldName, updatePolicy }', input: text });
    return z.NEVER;
  }
}, mappingsArraySchema);

const booleanPart = z
  .string()
  .transform((s) => s.trim().toLowerCase())
  .pipe(z.enum(['true', 'false'], { error: 'must be true or false' }))
  .transform((s) => s === 'true');

/** One character, other than a line break; `\t` (backslash, t) also means a tab. */
const characterPart = (what: string) =>
  z
    .string()
    .transform((s) => (s === '\\t' ? '\t' : s))
    .refine((s) => [...s].length === 1 && s !== '\r' && s !== '\n', `${what} must be one character other than a line break`);

export const csvImportOptionsSchema = z
  .strictObject({
    hasHeader: booleanPart.default(true),
    delimiter: characterPart('delimiter').optional().meta({ description: 'Auto-detected among comma, semicolon, tab and pipe when absent.' }),
    quoteChar: characterPart('quoteChar').default('"'),
    encoding: z
      .string()
      .transform((s, ctx) => {
        const name = ENCODING_NAMES[s.trim().toLowerCase()];
        if (name === undefined) {
          ctx.addIssue({ code: 'custom', message: `must be one of ${CSV_ENCODINGS.join(', ')}` });
          return z.NEVER;
        }
        return name;
      })
      .optional()
      .meta({ description: 'utf8 (default; a UTF-16LE byte-order mark selects utf16le), utf16le or latin1.' }),
    importMode: z.enum(CSV_IMPORT_MODES, { error: `must be one of ${CSV_IMPORT_MODES.join(', ')}` }).default('append'),
    numberFormat: z.enum(CSV_NUMBER_FORMATS, { error: `must be one of ${CSV_NUMBER_FORMATS.join(', ')}` }).default('us'),
    batchSize: z
      .string()
      .regex(/^\s*[0-9]+\s*$/, `must be an integer, 1 to ${CSV_BATCH_SIZE_MAX}`)
      .transform(Number)
      .pipe(z.number().int().min(1, `must be 1 to ${CSV_BATCH_SIZE_MAX}`).max(CSV_BATCH_SIZE_MAX, `must be 1 to ${CSV_BATCH_SIZE_MAX}`))
      .default(CSV_BATCH_SIZE_DEFAULT),
    mappings: mappingsPart.optional(),
  })
  .superRefine((o, ctx) => {
    if (o.delimiter !== undefined && o.delimiter === o.quoteChar) {
      ctx.addIssue({ code: 'custom', path: ['delimiter'], message: 'must differ from quoteChar' });
    }
    if (o.importMode !== 'append' && !o.mappings?.some((m) => m.updatePolicy === 'key')) {
      ctx.addIssue({
        code: 'custom',
        path: ['mappings'],
        message: `importMode ${o.importMode} needs mappings with at least one updatePolicy "key"`,
      });
    }
  });

/** The typed options of an import (defaults filled; `delimiter` and `encoding` may stay open). */
export type CsvImportOptions = z.output<typeof csvImportOptionsSchema>;
/** The options as a caller gives them: any subset, typed. */
export type CsvImportOptionsInput = Partial<CsvImportOptions>;

/** The names of the form parts, `file` first. */
export const CSV_IMPORT_PARTS = ['file', ...Object.keys(csvImportOptionsSchema.shape)] as const;

/** Typed options as the text of their form parts (what a client sends). */
export function csvImportOptionParts(options: CsvImportOptionsInput): [string, string][] {
  const parts: [string, string][] = [];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    parts.push([name, name === 'mappings' ? JSON.stringify(value) : String(value)]);
  }
  return parts;
}
