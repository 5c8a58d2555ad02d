import type { Command } from 'commander';

export function defineOpenApiCommand(program: Command): Command {
  return program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the upstream API (generated from the zod schemas)')
    .action(async () => {
      const { buildOpenApiDocument } = await import('../../api/openapi.ts');
      process.stdout.write(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
    });
}
