import { call } from '../test/helpers/emulator.ts';
import type { EmulatorProcess } from '../test/helpers/processes.ts';
import { ok } from '../test/helpers/schema.ts';

/**
 * The timed requests of a scenario: one HTTP call each to the emulator, the body sent as
 * already-encoded JSON (no client in between), failing on any status but 2xx.
 */
export function rawApi(emu: EmulatorProcess) {
  return async (method: string, path: string, rawBody?: string) =>
    ok(await call(emu.url, method, path, { token: emu.apiKey, ...(rawBody === undefined ? {} : { rawBody }) }), `${method} ${path}`).body;
}
