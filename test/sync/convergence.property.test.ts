import fc from 'fast-check';
import { it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { startSyncHarness } from '../helpers/sync-harness.ts';

/**
 * Random sequences of upstream changes — record creates, updates, deletes, field additions,
 * renames and removals, history switched on and off — interleaved with sync cycles always end
 * with mirror = upstream.
 */
type Step =
  | { kind: 'create'; count: number }
  | { kind: 'update'; pick: number; qty: number }
  | { kind: 'delete'; pick: number; count: number }
  | { kind: 'addField' }
  | { kind: 'renameField' }
  | { kind: 'dropField' }
  | { kind: 'toggleHistory' }
  | { kind: 'sync' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), count: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), qty: fc.integer({ min: -1000, max: 1000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat(), count: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'addField' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'renameField' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'dropField' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'toggleHistory' as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'sync' as const }) },
);

forEachDialect('pull: convergence', (dialect) => {
  it('random upstream changes interleaved with syncs end with mirror = upstream', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 14 }), fc.boolean(), async (steps, history) => {
        const h = await startSyncHarness(dialect, { deleteShareFloor: 1000 });
        try {
          await h.upstream.createModule('p');
          await h.upstream.createTable('p', 'things', { hasHistory: history }, [
            { name: 'qty', type: 'number', labels: { '': 'Qty' } },
          ]);
          let ids: string[] = [];
          let extra = 0;
          let extras: string[] = [];
          let hasHistory = history;
          for (const s of steps) {
            switch (s.kind) {
              case 'create': {
                const values = Array.from({ length: s.count }, (_, i) => ({ qty: i }));
                ids.push(...(await h.upstream.createRecords('p', 'things', values)));
                break;
              }
              case 'update':
                if (ids.length > 0) await h.upstream.updateRecords('p', 'things', [{ id: ids[s.pick % ids.length], qty: s.qty }]);
                break;
              case 'delete': {
                if (ids.length === 0) break;
                const start = s.pick % ids.length;
                const gone = ids.slice(start, start + s.count);
                await h.upstream.deleteRecords('p', 'things', gone);
                ids = ids.filter((id) => !gone.includes(id));
                break;
              }
              case 'addField': {
                const name = `extra_${++extra}`;
                await h.upstream.addFields('p', 'things', [{ name, type: 'string', labels: { '': name } }]);
                extras.push(name);
                if (ids.length > 0) await h.upstream.updateRecords('p', 'things', [{ id: ids[0], [name]: `v${extra}` }]);
                break;
              }
              case 'renameField': {
                const from = extras.pop();
                if (from) {
                  const to = `renamed_${++extra}`;
                  await h.upstream.patchField('p', 'things', from, { name: to });
                  extras.push(to);
                }
                break;
              }
              case 'dropField': {
                const name = extras.shift();
                if (name) await h.upstream.deleteField('p', 'things', name);
                break;
              }
              case 'toggleHistory':
                hasHistory = !hasHistory;
                await h.upstream.patchTable('p', 'things', { hasHistory });
                // Each switch is seen by a cycle before the next one: history switched off and on
                // again between two cycles is a known gap (docs/sync.md, "Tables with history").
                await h.sync();
                break;
              case 'sync':
                await h.sync();
                break;
            }
          }
          await h.sync();
          await h.expectConverged('p', 'things');
        } finally {
          await h.close();
          // Many runs in one suite: give each run's connection pool back now, not at the end.
          await h.tm.mirror.close();
        }
      }),
      { numRuns: 12 },
    );
  }, 180_000);
});
