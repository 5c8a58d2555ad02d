import { afterEach, expect, it } from 'vitest';
import { NetworkError } from '../../src/errors.ts';
import { SyncEngine, type Upstream } from '../../src/sync/index.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { upstreamWith } from '../helpers/upstream-overrides.ts';

const label = (text: string) => ({ '': text });

/**
 * A create whose choice and multi values name their options (upstream takes an option's name and
 * stores its id), sent and applied upstream, its answer lost: the read-back after it finds the
 * record it made, and it is not created twice.
 */
forEachDialect('push: read-back of a create that named its options', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  for (const hasHistory of [true, false]) {
    it(`binds the create to the record it made (history ${hasHistory})`, async () => {
      // No backoff: a create the read-back misses is sent again by the next cycle.
      // No settle either: a create whose answer was lost is looked up at once.
      h = await startSyncHarness(dialect, { lookbackMs: 0, pushRetryBaseMs: 0, pushRetryMaxMs: 0, createSettleMs: 0 });
      await h.upstream.createModule('crm');
      await h.upstream.createTable('crm', 'deals', { hasHistory }, [
        { name: 'title', type: 'string', labels: label('Title') },
        { name: 'tier', type: 'choice', labels: label('Tier'), options: [{ name: 'gold' }, { name: 'silver' }] },
        { name: 'tags', type: 'multi', labels: label('Tags'), options: [{ name: 'hot' }, { name: 'big' }] },
      ] as never);
      await h.sync();
      const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'deals'))!.sqlName);
      await questionMarkSql(h.tm)(`INSERT INTO ${table} (title, tier, tags) VALUES (?, ?, ${dialect.dialect === 'postgres' ? '?::jsonb' : '?'})`,
        ['big one', 'gold', JSON.stringify(['hot', 'big'])]);

      let lost = 0;
      const lossy = upstreamWith(h.client, {
        async createRecords(...args: Parameters<Upstream['createRecords']>) {
          const made = await h.client.createRecords(...args);
          if (lost++ > 0) return made;
          throw new NetworkError({ endpoint: 'createRecords', method: 'POST', path: '/records' }, 'socket hang up', {
            attempts: 1, timeout: false, causeCode: 'UND_ERR_SOCKET',
          });
        },
      });
      await new SyncEngine({ client: lossy, mirror: h.tm.mirror, options: { lookbackMs: 0, pushRetryBaseMs: 0, pushRetryMaxMs: 0, createSettleMs: 0 } }).runCycle();
      await h.sync();
      await h.sync();

      const records = await h.upstream.allRecords('crm', 'deals');
      expect(records.map((r) => r.values.title)).toEqual(['big one']);
      expect(await h.tm.sql(`SELECT * FROM ${h.tm.table('_wsmirror_outbox')}`)).toEqual([]);
      await h.expectConverged('crm', 'deals');
    }, 60_000);
  }
});
