import { afterEach } from 'vitest';
import { startWsmirror, stopProcess, type LiveWsmirror } from './processes.ts';

/**
 * `startWsmirror` whose processes are SIGKILLed after each test, so that one a failed test left
 * running goes with it. Call it where `afterEach` may be registered (a test file, a describe).
 * Apart from processes.ts, which the benchmarks import outside vitest.
 */
export function startWsmirrorKilledAfterEach(): typeof startWsmirror {
  const live: LiveWsmirror[] = [];
  afterEach(async () => {
    for (const daemon of live.splice(0)) await stopProcess(daemon.child, 'SIGKILL');
  });
  return (...args) => {
    const started = startWsmirror(...args);
    live.push(started);
    return started;
  };
}
