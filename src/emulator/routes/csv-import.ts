import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { csvImportOptionsSchema, endpoints } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { CsvFileReader } from '../csv/csv-reader.ts';
import { CSV_FORM_OPTIONS, CSV_REQUEST_LIMIT_BYTES, fileTooLarge, receiveCsvForm } from '../csv/csv-upload.ts';
import { BadRequestError } from '../errors.ts';
import { refuseContentCoding } from '../http/body-parsers.ts';
import { defineRoute, parseInput } from '../http/define-route.ts';
import { requireImportRoles } from '../store/import-roles.ts';
import { importRecords } from '../store/record-import.ts';

/**
 * `POST …/records/import/csv`. The route lives in its own encapsulated scope: there the only body
 * parser is the multipart one, which reads nothing by itself, so the handler checks the path, the
 * workspace and the table before a byte of the body is read (the key was checked before that),
 * and streams the file to disk under its own 50 MiB limit. The JSON body limit of every other
 * route stays as it is.
 */
export function registerCsvImportRoute(app: FastifyInstance, ctx: EmulatorContext): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Any other content type reaches the handler unread, to be refused there.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    await scope.register(multipart, CSV_FORM_OPTIONS);

    defineRoute(scope, ctx, endpoints.importCsv, async ({ params, request, apiKey }) => {
      const target = ctx.schema.requireTable(params.moduleName, params.tableName);
      requireImportRoles(ctx, target, apiKey);
      if (!request.isMultipart()) {
        throw new BadRequestError(
          `unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}: send multipart/form-data with the CSV in a part named file`,
        );
      }
      refuseContentCoding(request);
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > CSV_REQUEST_LIMIT_BYTES) throw fileTooLarge();
      const form = await receiveCsvForm(request);
      try {
        const options = parseInput(csvImportOptionsSchema, form.parts, 'form');
        const reader = new CsvFileReader(form.filePath, {
          encoding: options.encoding,
          delimiter: options.delimiter,
          quoteChar: options.quoteChar,
          numberFormat: options.numberFormat,
        });
        // The table may have gone, or its role lists changed, while the file was arriving: looked up
        // and checked again, for the mode asked, once the import holds the store.
        const table = () => {
          const target = ctx.schema.requireTable(params.moduleName, params.tableName);
          requireImportRoles(ctx, target, apiKey, options.importMode);
          return target;
        };
        return { data: await importRecords(ctx, table, reader.records(), options, apiKey) };
      } finally {
        await form.discard();
      }
    });
  });
}
