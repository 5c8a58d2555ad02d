import { endpoints, type EndpointName } from '../../api/index.ts';
import { defineCheck, type CheckContext } from '../check.ts';
import { expectError } from '../expectations.ts';
import { field } from './fixtures.ts';

/**
 * Authentication: every endpoint wants the bearer key; a missing or wrong one is 401 with the
 * error body, whatever else the request holds. Each endpoint is asked about a scratch table and
 * its field, so a request wrongly let through touches nothing else.
 */
async function refusedEverywhere(ctx: CheckContext, auth: 'none' | 'wrong'): Promise<void> {
  const table = await ctx.scratch.create(`auth_${auth}`, {}, [field('f', 'string')]);
  const params = { tableName: table.name, fieldName: 'f' };
  for (const endpoint of Object.keys(endpoints) as EndpointName[]) {
    const def = endpoints[endpoint];
    const query = 'query' in def ? { since: '2020-01-01T00:00:00Z', limit: 1 } : undefined;
    // A create let through wrongly makes a table of this run, which the run's last sweep deletes.
    const body = endpoint === 'createTable' ? { name: ctx.missingName } : 'body' in def ? {} : undefined;
    const request = { auth, params, ...(query && endpoint.endsWith('Changes') ? { query } : {}), ...(body === undefined ? {} : { body }) };
    expectError(await ctx.send(endpoint, request), 401, `${def.method} ${endpoint} answers 401 with the error body`);
  }
}

export const authChecks = [
  defineCheck({
    id: 'auth.missing-key-401',
    section: 'Authentication',
    rule: 'Every endpoint answers a request without an Authorization header with 401 and the error body.',
    scratchTables: ['auth_none'],
    run: (ctx) => refusedEverywhere(ctx, 'none'),
  }),
  defineCheck({
    id: 'auth.invalid-key-401',
    section: 'Authentication',
    rule: 'Every endpoint answers a request with a key the workspace does not know with 401 and the error body.',
    scratchTables: ['auth_wrong'],
    run: (ctx) => refusedEverywhere(ctx, 'wrong'),
  }),
  defineCheck({
    id: 'auth.invalid-key-large-body-401',
    section: 'Authentication',
    rule: 'A request with an invalid key answers 401 also when it carries a large body: the client gets the 401, not a connection reset while it is still sending (a records create of 5 MiB, three times).',
    scratchTables: ['auth_large'],
    async run(ctx) {
      const table = await ctx.scratch.create('auth_large', {}, [field('f', 'string')]);
      const rawBody = JSON.stringify({ records: [{ f: 'x'.repeat(LARGE_BODY_BYTES) }] });
      for (let i = 1; i <= 3; i++) {
        const res = await ctx.send('createRecords', { auth: 'wrong', params: { tableName: table.name }, rawBody, once: true });
        expectError(res, 401, `a 5 MiB create with a wrong key answers 401 (try ${i})`);
      }
    },
  }),
];

// Under the 6 MB limit, so that 401 is the only answer the description allows; well over what
// the kernel buffers of a connection hold, so an endpoint that closes without reading it resets it.
const LARGE_BODY_BYTES = 5 * 1024 * 1024;
