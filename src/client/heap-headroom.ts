import { getHeapStatistics } from 'node:v8';

/**
 * Whether a JSON body can be read within the process's heap. V8 cannot recover from running out
 * of heap: the process dies, and a service manager restarts it into the same answer for ever. A
 * body that could never fit is refused instead, with a message saying how large it is.
 */

/**
 * Heap a parsed and checked body takes per property at most: its value, its slot, its share of
 * the object holding it, and the same again for the checked copy (measured on workspace answers
 * of 2,000 to 600,000 tables: 35 to 100 bytes).
 */
const BYTES_PER_PROPERTY = 100;
/** A property takes at least this many bytes of JSON (`"a":1,`): bounds the estimate before counting. */
const MIN_PROPERTY_BYTES = 4;
const COLON = 0x3a;

/** What reading a body would take, or undefined when it fits anyway. */
export interface HeapShortfall {
  bodyBytes: number;
  properties: number;
  neededBytes: number;
  heapLimitBytes: number;
}

/**
 * The shortfall of reading `bytes` as JSON with the whole heap for it, or undefined when it may
 * fit. The text takes its own size again once decoded; each property about `BYTES_PER_PROPERTY`.
 * Colons outside strings count as properties, those inside strings too: the estimate errs high
 * only for text full of colons, whose strings then cost their length, not a property each.
 */
export function heapShortfall(bytes: Uint8Array, heapLimitBytes = getHeapStatistics().heap_size_limit): HeapShortfall | undefined {
  const ceiling = bytes.length + (bytes.length / MIN_PROPERTY_BYTES) * BYTES_PER_PROPERTY;
  if (ceiling <= heapLimitBytes) return undefined;
  let properties = 0;
  for (let i = bytes.indexOf(COLON); i !== -1; i = bytes.indexOf(COLON, i + 1)) properties++;
  const neededBytes = bytes.length + properties * BYTES_PER_PROPERTY;
  if (neededBytes <= heapLimitBytes) return undefined;
  return { bodyBytes: bytes.length, properties, neededBytes, heapLimitBytes };
}

/** The shortfall in words, as the client's errors say it. */
export function describeShortfall(s: HeapShortfall): string {
  const mb = (n: number) => `${Math.ceil(n / (1024 * 1024))} MB`;
  return `the answer is ${mb(s.bodyBytes)} of JSON with ${s.properties} values: reading it takes about ${mb(s.neededBytes)} of memory, `
    + `more than this process's heap limit of ${mb(s.heapLimitBytes)}`;
}
