/**
 * Resolves once the requests started before the call are written to their kept-alive
 * connections. undici writes a request on a reused connection only in the next check phase (it
 * first lets a close the server sent meanwhile arrive), so synchronous work begun at once (a
 * SQLite transaction, say) would hold the request back until it ends, and upstream would wait
 * instead of working alongside. Two check phases later the request has been written; one is
 * not enough, as the caller's immediate may run before undici's.
 */
export function requestsWritten(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
