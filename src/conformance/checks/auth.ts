import { defineCheck, type CheckContext } from '../check.ts';
import { expectError } from '../expectations.ts';

/** Authentication: every endpoint wants the bearer key; a missing or wrong one is 401 with the error body. */

async function refusedEverywhere(ctx: CheckContext, auth: 'none' | 'wrong'): Promise<void> {
  const name = ctx.scratch.name(`auth_${auth}`);
  expectError(await ctx.send('getWorkspace', { auth }), 401);
  expectError(await ctx.send('listTables', { auth }), 401);
  expectError(await ctx.send('listSchemaChanges', { auth, query: { since: '2020-01-01T00:00:00Z', limit: 1 } }), 401);
  // A valid create: only the key is wrong. Its name is a scratch name, so a wrong 2xx is swept up.
  expectError(await ctx.send('createTable', { auth, body: { name } }), 401);
}

export const authChecks = [
  defineCheck({
    id: 'auth.missing-key-401',
    section: 'Authentication',
    rule: 'A request without an Authorization header returns 401 with the error body.',
    scratchTables: ['auth_none'],
    run: (ctx) => refusedEverywhere(ctx, 'none'),
  }),
  defineCheck({
    id: 'auth.invalid-key-401',
    section: 'Authentication',
    rule: 'A request with a key the workspace does not know returns 401 with the error body.',
    scratchTables: ['auth_wrong'],
    run: (ctx) => refusedEverywhere(ctx, 'wrong'),
  }),
];
