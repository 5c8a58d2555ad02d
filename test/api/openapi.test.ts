import { expect, it } from 'vitest';
import { CSV_IMPORT_PARTS, buildOpenApiDocument, endpoints, type Endpoint } from '../../src/api/index.ts';
import { runWsmirror } from '../helpers/processes.ts';

/** The OpenAPI document is generated from the contract: every endpoint, parameter and schema is in it. */
const doc = buildOpenApiDocument() as any;

it('describes every endpoint of the contract with its method, path parameters and statuses', () => {
  expect(doc.openapi).toBe('3.1.0');
  for (const [operationId, endpoint] of Object.entries(endpoints) as [string, Endpoint][]) {
    const operation = doc.paths[endpoint.path]?.[endpoint.method.toLowerCase()];
    expect(operation, `${endpoint.method} ${endpoint.path}`).toBeDefined();
    expect(operation.operationId).toBe(operationId);
    const pathParams = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const declared = operation.parameters.filter((p: any) => p.in === 'path');
    expect(declared.map((p: any) => p.name).sort()).toEqual([...pathParams].sort());
    expect(declared.every((p: any) => p.required === true)).toBe(true);
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining([String(endpoint.status), '401', ...endpoint.errors.map(String)]),
    );
    expect(operation.security).toEqual([{ bearer: [] }]);
  }
  expect(Object.values(doc.paths).flatMap((p: any) => Object.keys(p)).length).toBe(Object.keys(endpoints).length);
});

it('carries the schemas: field create objects accept no other properties and require labels, name, type', () => {
  const body = doc.paths[endpoints.createField.path].post.requestBody.content['application/json'].schema;
  expect(body.additionalProperties).toBe(false);
  expect(body.required).toEqual(expect.arrayContaining(['labels', 'name', 'type']));
  expect(body.properties.type.enum).toContain('reference');
  expect(body.properties.type.enum).not.toContain('any');
  const query = doc.paths[endpoints.listRecordChanges.path].get.parameters.filter((p: any) => p.in === 'query');
  expect(query.find((p: any) => p.name === 'since').required).toBe(true);
  expect(query.find((p: any) => p.name === 'asOf').required).toBe(false);
  const csv = doc.paths[endpoints.importCsv.path].post.requestBody.content['multipart/form-data'].schema;
  expect(csv.required).toEqual(['file']);
  expect(Object.keys(csv.properties)).toEqual([...CSV_IMPORT_PARTS]);
});

it('`wsmirror openapi` prints the same document', async () => {
  const run = await runWsmirror(['openapi'], {});
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual(doc);
});
