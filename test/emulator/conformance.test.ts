import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CHECKS, runConformance } from '../../src/conformance/index.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { makeModule } from '../helpers/schema.ts';

/**
 * The emulator's conformance to the API description: the checks of `src/conformance/`, which
 * `wsmirror conformance` runs against any endpoint, each as its own test here. Every rule is
 * written once, there; the other files of this folder test what only the emulator has (its
 * admin surface, faults, clock) and the choices it documents where the description is open.
 */
const MODULE = 'conformance';
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator();
  await makeModule(emu, MODULE);
});
afterAll(() => emu.close());

describe('the emulator against the conformance suite', () => {
  for (const check of ALL_CHECKS) {
    it(`${check.id}: ${check.rule}`, async () => {
      const report = await runConformance({
        target: { baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId }, module: MODULE, rate: 0, checks: [check],
      });
      const [result] = report.results;
      expect(result?.failure).toBeUndefined();
      // Where the description is open, the emulator does what docs/emulator.md says it does.
      if (check.kind === 'observation') expect(result?.observation, result?.observation?.observed).toMatchObject({ asEmulator: true });
      else expect(result?.outcome).toBe('pass');
      expect(report.cleanupFailures).toEqual([]);
    });
  }

  it('leaves no scratch table behind', async () => {
    const res = await fetch(`${emu.url}${emu.base}/modules/${MODULE}/tables`, { headers: { authorization: `Bearer ${emu.apiKey}` } });
    expect(((await res.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
