import { defineCheck } from '../check.ts';
import { expectOk, expectTrue } from '../expectations.ts';
import { field } from './fixtures.ts';

/** The workspace endpoint: every module with its tables and their fields. */
export const workspaceChecks = [
  defineCheck({
    id: 'workspace.get',
    section: 'Workspace',
    rule: 'GET workspace answers { data: Workspace } with all modules, their tables and their fields.',
    scratchTables: ['workspace'],
    async run(ctx) {
      const table = await ctx.scratch.create('workspace', {}, [field('title', 'string'), field('size', 'number')]);
      const res = await ctx.send('getWorkspace');
      const workspace = expectOk(res, 'GET workspace succeeds').data;
      const module = workspace.modules.find((m) => m.name === ctx.module);
      expectTrue(module !== undefined, `the workspace lists the module ${ctx.module}`, `a module named ${ctx.module}`, workspace.modules.map((m) => m.name), res);
      const listed = module!.tables.find((t) => t.name === table.name);
      expectTrue(listed !== undefined, 'the module lists the new table', `a table named ${table.name}`, module!.tables.map((t) => t.name), res);
      const names = listed!.fields?.map((f) => f.name);
      expectTrue(names?.join() === 'title,size', 'the table lists its fields', 'fields title, size', names, res);
    },
  }),
];
