import * as z from 'zod';
import { errorBodySchema } from './common.ts';
import {
  CSV_BATCH_SIZE_DEFAULT, CSV_BATCH_SIZE_MAX, CSV_ENCODINGS, CSV_IMPORT_MODES, CSV_NUMBER_FORMATS, CSV_UPDATE_POLICIES,
} from './csv-import.ts';
import { endpoints, type Endpoint } from './endpoints.ts';
import { CSV_FILE_LIMIT_BYTES } from './records.ts';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failure',
  401: 'Missing or invalid API key',
  404: 'Workspace, module, table, field or record not found',
  413: 'Payload too large',
  500: 'Internal server error',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return rest;
}

function parameters(endpoint: Endpoint) {
  const out: object[] = [];
  for (const [name, schema] of Object.entries(endpoint.params.shape)) {
    out.push({ name, in: 'path', required: true, schema: jsonSchema(schema as z.ZodType, 'input') });
  }
  if (endpoint.query) {
    const query = jsonSchema(endpoint.query, 'input') as { properties?: Record<string, object>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      out.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  return out;
}

/** The OpenAPI 3.1 document of the API, generated from the zod schemas. */
export function buildOpenApiDocument(serverUrl?: string) {
  const paths: Record<string, Record<string, object>> = {};
  for (const [operationId, endpoint] of Object.entries(endpoints) as [string, Endpoint][]) {
    const responses: Record<string, object> = {
      [String(endpoint.status)]: {
        description: 'Success',
        content: { 'application/json': { schema: jsonSchema(endpoint.response, 'output') } },
      },
    };
    for (const status of [...endpoint.errors, 500]) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        content: { 'application/json': { schema: jsonSchema(errorBodySchema, 'output') } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId,
      summary: endpoint.summary,
      security: [{ bearer: [] }],
      parameters: parameters(endpoint),
      responses,
    };
    if (endpoint.body) {
      operation.requestBody = {
        required: true,
        content: { 'application/json': { schema: jsonSchema(endpoint.body, 'input') } },
      };
    } else if (endpoint.multipart) {
      operation.requestBody = {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: ['file'],
              properties: {
                file: { type: 'string', contentMediaType: 'text/csv', description: `The CSV file, at most ${CSV_FILE_LIMIT_BYTES} bytes.` },
                hasHeader: { type: 'boolean', default: true },
                delimiter: { type: 'string', description: 'One character; detected among comma, semicolon, tab and pipe when absent.' },
                quoteChar: { type: 'string', default: '"' },
                encoding: { type: 'string', enum: [...CSV_ENCODINGS], default: 'utf8' },
                importMode: { type: 'string', enum: [...CSV_IMPORT_MODES], default: 'append' },
                numberFormat: { type: 'string', enum: [...CSV_NUMBER_FORMATS], default: 'us' },
                batchSize: { type: 'integer', minimum: 1, maximum: CSV_BATCH_SIZE_MAX, default: CSV_BATCH_SIZE_DEFAULT },
                mappings: {
                  type: 'string',
                  description: `JSON array of { csvColumnName, fieldName, updatePolicy }; updatePolicy is one of ${CSV_UPDATE_POLICIES.join(', ')}.`,
                },
              },
            },
          },
        },
      };
    }
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Workspace Data and Schema API', version: '1.0.0' },
    servers: serverUrl ? [{ url: serverUrl }] : [],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
