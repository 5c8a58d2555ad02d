/**
 * Text the mirror can store everywhere. Postgres refuses NUL in `text` and `jsonb` and any
 * unpaired UTF-16 surrogate (a value, a label, an option name from upstream would fail its whole
 * batch), and SQLite tools stop reading at NUL. The mirror stores U+FFFD (the replacement
 * character) in place of each, in both dialects, so a mirror holds the same text whatever its
 * dialect; docs/mirror.md says so.
 */
export const REPLACEMENT_CHARACTER = '\ufffd';

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** True when `text` holds a NUL or an unpaired surrogate. */
export function isUnstorable(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** `text` with U+FFFD for each NUL and unpaired surrogate; the same string when there is none. */
export function storableText(text: string): string {
  return isUnstorable(text) ? text.replace(UNSTORABLE, REPLACEMENT_CHARACTER) : text;
}

/**
 * A JSON-shaped value with every string (object keys too) made storable; the same value when
 * nothing needed it. Objects come back with a null prototype only when rebuilt.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = storableJson(value[i]);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    let changed = false;
    const fixed = entries.map(([k, v]): [string, unknown] => {
      const key = storableText(k);
      const item = storableJson(v);
      if (key !== k || item !== v) changed = true;
      return [key, item];
    });
    if (!changed) return value;
    // defineProperty semantics: a `__proto__` key stays an own key.
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of fixed) out[k] = v;
    return out;
  }
  return value;
}
