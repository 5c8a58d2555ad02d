import { z } from 'zod';
import { errorBodySchema } from './common.ts';
import { endpoints, type Endpoint } from './endpoints.ts';

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
                file: { type: 'string', contentMediaType: 'text/csv' },
                hasHeader: { type: 'boolean', default: true },
                delimiter: { type: 'string' },
                quoteChar: { type: 'string', default: '"' },
                encoding: { type: 'string', default: 'utf8' },
                importMode: { type: 'string', enum: ['append', 'update', 'upsert'], default: 'append' },
                numberFormat: { type: 'string', default: 'us' },
                batchSize: { type: 'integer', default: 100 },
                mappings: { type: 'string', description: 'JSON array of { csvColumnName, fieldName, updatePolicy }' },
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
