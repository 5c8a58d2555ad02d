/**
 * What an API key may be: it travels in an HTTP header, so printable ASCII without spaces.
 * The configuration checks every key source (variable, file, systemd credential) with this rule.
 * Messages never repeat the value: it is the secret.
 */

export const API_KEY_RULE = 'must be a non-empty string without spaces or line breaks';

/** The key trimmed, or undefined when it breaks the rule. */
export function checkApiKey(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x21-\x7e]+$/.test(value.trim()) ? value.trim() : undefined;
}
