/**
 * Splits request items into batches whose JSON body stays under a byte limit (the API refuses
 * record payloads over 6 MB with 413) and a count limit (so a batch refused with 400 is split
 * in a bounded number of steps). An item that alone exceeds the byte limit gets a batch of its
 * own: the upstream's 413 then marks just that edit failed.
 */
export function chunkByPayload<T>(
  items: readonly T[],
  limits: { maxBytes: number; maxItems: number },
  bodyOf: (item: T) => unknown = (item) => item,
): T[][] {
  // `{"records":[` … `]}` plus one comma between items.
  const envelope = 14;
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = envelope;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(bodyOf(item)) ?? 'null') + 1;
    if (current.length > 0 && (bytes + size > limits.maxBytes || current.length >= limits.maxItems)) {
      chunks.push(current);
      current = [];
      bytes = envelope;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
