/**
 * Splits request items into batches whose JSON body stays under a byte limit (the API refuses
 * record payloads over 6 MB with 413) and a count limit (so a batch refused with 400 is split
 * in a bounded number of steps). An item that alone exceeds the byte limit gets a batch of its
 * own: the upstream's 413 then marks just that edit failed. Batches are filled in order, each as
 * full as both limits allow.
 */
export function chunkByPayload<T>(
  items: readonly T[],
  limits: { maxBytes: number; maxItems: number },
  bodyOf: (item: T) => unknown = (item) => item,
): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length;) {
    // Most batches are far under the byte limit: one JSON text of a whole batch's worth of items
    // tells so at once (measuring item by item cost the push of 10,000 edits ~9 ms of CPU).
    const run = items.slice(start, start + limits.maxItems);
    const chunk = ENVELOPE + jsonBytes(run.map(bodyOf)) <= limits.maxBytes ? run : fillByBytes(items, start, limits, bodyOf);
    chunks.push(chunk);
    start += chunk.length;
  }
  return chunks;
}

/** `{"records":` and `}` around the JSON list of the items. */
const ENVELOPE = 12;

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

/** The batch that starts at `start`, measured item by item: at least one item, then as many as fit. */
function fillByBytes<T>(items: readonly T[], start: number, limits: { maxBytes: number; maxItems: number }, bodyOf: (item: T) => unknown): T[] {
  // The envelope and the list's `[`, then each item with the comma (or `]`) after it.
  let bytes = ENVELOPE + 1;
  const chunk: T[] = [];
  for (let i = start; i < items.length && chunk.length < limits.maxItems; i++) {
    const size = jsonBytes(bodyOf(items[i]!)) + 1;
    if (chunk.length > 0 && bytes + size > limits.maxBytes) break;
    chunk.push(items[i]!);
    bytes += size;
  }
  return chunk;
}
