import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestsWritten, WorkspaceClient } from '../../src/client/index.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';

/**
 * The push settles and reads while its requests are out (docs/sync.md). That only overlaps
 * upstream's work if the request is written before the daemon's synchronous work starts: undici
 * writes a request on a reused keep-alive connection one check phase after it is made.
 */

let emu: RunningEmulator;
let client: WorkspaceClient;

beforeAll(async () => {
  emu = await startEmulator();
  client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
});

afterAll(async () => {
  await client?.close();
  await emu?.close();
});

it('resolves once a request made before it is written to its kept-alive connection', async () => {
  await client.getWorkspace();
  let written = 0;
  const onHeaders = () => { written += 1; };
  subscribe('undici:client:sendHeaders', onHeaders);
  try {
    for (let i = 1; i <= 3; i++) {
      const pending = client.getWorkspace();
      await requestsWritten();
      expect(written, `request ${i}`).toBe(i);
      await pending;
    }
  } finally {
    unsubscribe('undici:client:sendHeaders', onHeaders);
  }
});
