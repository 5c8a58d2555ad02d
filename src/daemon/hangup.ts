/**
 * SIGHUP for `wsmirror run`: the configuration is read once, at start, so there is nothing to
 * reload. Without a handler Node dies of the signal without a word, and systemd counts a death
 * by SIGHUP as clean (Restart=on-failure leaves the service down); so say what a reload would
 * need and keep running.
 */
import type { Logger } from './logger.ts';

const HANGUP_MESSAGE =
  'SIGHUP ignored: the configuration is read at start only; restart wsmirror to apply changes';

/** Installs the handler; returns a function that removes it. */
export function handleHangupSignal(logger: Pick<Logger, 'warn'>): () => void {
  const listener = () => logger.warn({ signal: 'SIGHUP' }, HANGUP_MESSAGE);
  process.on('SIGHUP', listener);
  return () => {
    process.off('SIGHUP', listener);
  };
}
