/**
 * Whether two API values are the same value: null and absent are the same, objects compare by
 * content whatever their key order. Both sides come in the API's read shape (the mirror's codec
 * decodes to it, and upstream answers in it), so no type knowledge is needed.
 */
export function sameApiValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value ?? null));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
