/**
 * SIGTERM/SIGINT handling for `wsmirror run` and `wsmirror sync`: the first signal starts a
 * graceful stop (the running cycle commits its open transaction and returns, then the process
 * exits); a second one exits at once, which is safe because every write is a transaction
 * (DESIGN §4.6).
 */
import type { Logger } from './logger.ts';

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

const SIGNAL_NUMBERS: Readonly<Record<ShutdownSignal, number>> = { SIGINT: 2, SIGTERM: 15 };

export interface ShutdownOptions {
  /** Starts the graceful stop; it is called once. */
  onSignal: (signal: ShutdownSignal) => Promise<void> | void;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Called on the second signal with 128 + the signal number; default `process.exit`. */
  forceExit?: (code: number) => void;
}

/** Installs the handlers; returns a function that removes them. */
export function handleShutdownSignals(options: ShutdownOptions): () => void {
  let stopping = false;
  const forceExit = options.forceExit ?? ((code: number) => process.exit(code));
  const listener = (signal: ShutdownSignal) => {
    if (stopping) {
      options.logger?.warn({ signal }, 'second signal: exiting without waiting for the running cycle');
      forceExit(128 + SIGNAL_NUMBERS[signal]);
      return;
    }
    stopping = true;
    options.logger?.info({ signal }, 'stopping: letting the running cycle finish (signal again to force)');
    Promise.resolve()
      .then(() => options.onSignal(signal))
      .catch((error: unknown) => options.logger?.warn({ err: error }, 'graceful stop failed'));
  };
  const signals: ShutdownSignal[] = ['SIGTERM', 'SIGINT'];
  for (const signal of signals) process.on(signal, listener);
  return () => {
    for (const signal of signals) process.off(signal, listener);
  };
}
