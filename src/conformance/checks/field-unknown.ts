import { defineCheck } from '../check.ts';
import { fieldParams } from './field-requests.ts';

/** Fields: what the single-field GET, PATCH and DELETE answer for a field that does not exist. */

export const unknownFieldChecks = [
  defineCheck({
    id: 'fields.single.unknown-field-status',
    kind: 'observation',
    section: 'Errors',
    rule: 'Errors of the single-field GET, PATCH and DELETE: not shown. What they answer for a field that does not exist.',
    emulatorChoice: '404 for each',
    scratchTables: ['unknown_field'],
    async run(ctx) {
      const { name } = await ctx.scratch.create('unknown_field');
      const params = fieldParams(name, 'nope');
      const statuses = [
        (await ctx.send('getField', params)).status,
        (await ctx.send('updateField', { ...params, body: { required: true } })).status,
        (await ctx.send('deleteField', params)).status,
      ];
      return { observed: `GET ${statuses[0]}, PATCH ${statuses[1]}, DELETE ${statuses[2]}`, asEmulator: statuses.every((s) => s === 404) };
    },
  }),
];
