/**
 * Runs `send` for each item, at most `limit` at a time, and resolves once all are done (the first
 * failure rejects, as `Promise.all` does; the calls under way still run to their end). With two
 * requests out, upstream starts on the next batch while the daemon reads the answer to the last.
 */
export async function forEachInFlight<T>(items: readonly T[], limit: number, send: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await send(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), items.length) }, lane));
}
