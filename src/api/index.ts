// The API contract: shared by the client and the emulator, and the source of the OpenAPI document.
export * from './identifiers.ts';
export * from './timestamp.ts';
export * from './roles.ts';
export * from './common.ts';
export * from './paging.ts';
export * from './field-types.ts';
export * from './values.ts';
export * from './field.ts';
export * from './table.ts';
export * from './workspace.ts';
export * from './records.ts';
export * from './csv-import.ts';
export * from './changes.ts';
export * from './endpoints.ts';
export * from './issues.ts';
export * from './openapi.ts';
