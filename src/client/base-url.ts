/**
 * The upstream base URL rule: http or https, no query or fragment, and without `/api/v1` (the
 * client adds the API's paths itself; a URL ending in it would ask for `/api/v1/api/v1/…`).
 * The configuration checks `upstream.baseUrl` with this same rule.
 */
import { REDACTED, unparsedUrlForMessages, urlForMessages } from '../api/secret-redaction.ts';

export const BASE_URL_RULE = 'an http:// or https:// URL without query or fragment, such as https://db.example.com';

/** `scheme://` in front: without it, `localhost:8787` would read as a URL of scheme `localhost`. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The URL normalised (no trailing slash), or why it is refused. */
export function checkBaseUrl(value: unknown): { url: string } | { problem: string } {
  if (typeof value !== 'string') return { problem: `is not ${BASE_URL_RULE}` };
  if (!SCHEME.test(value.trim())) {
    // Not the rule's example URL before the hint: text redaction would read `example.com: … @` as a password.
    const meant = meantUrl(value.trim());
    return { problem: `is not an http:// or https:// URL: ${meant === undefined
      ? `add http:// or https:// in front (http://${displayBaseUrl(value)})`
      : `write the scheme as http:// or https:// (${displayBaseUrl(meant)})`}` };
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { problem: `is not ${BASE_URL_RULE}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `is not ${BASE_URL_RULE}` };
  if (url.search !== '' || url.hash !== '') return { problem: `is not ${BASE_URL_RULE}` };
  if (/\/api\/v1\/?$/.test(url.pathname)) return { problem: 'ends in /api/v1: give the base URL only, wsmirror adds the path' };
  return { url: url.href.replace(/\/+$/, '') };
}

/**
 * A base URL (the configured value, or the checked one) as messages and logs show it: rebuilt
 * from its parts with any credentials (a user, a password, a token as the user) as [Redacted],
 * which the client never sends anyway (it asks the URL's origin); a value that is no URL with
 * everything after its user part hidden.
 */
export function displayBaseUrl(value: string): string {
  if (!SCHEME.test(value.trim())) return withoutQuery(unparsedUrlForMessages(value.trim(), { keepUser: false }));
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return withoutQuery(unparsedUrlForMessages(value.trim(), { keepUser: false }));
  }
  const shown = urlForMessages(url);
  return url.search === '' && url.hash === '' ? shown.replace(/\/+$/, '') : withoutQuery(`${shown}${url.hash}`);
}

/**
 * A base URL has no query or fragment (BASE_URL_RULE), so one there is no setting wsmirror knows:
 * shown only as being there, whatever its parameters are named (`?api_key=…`, `?token=…`).
 * Applied to text whose credentials are already hidden, so no `?` of a password is cut at.
 */
function withoutQuery(shown: string): string {
  const at = shown.search(/[?#]/);
  return at < 0 ? shown : `${shown.slice(0, at + 1)}${REDACTED}`;
}

/**
 * The URL a value with its http or https scheme written wrong most likely meant
 * (`https:/db.example.com`, `http//h:1`, `https:db.example.com`, `//h:1`); undefined for a value
 * with no scheme at all (`localhost:8787`), which is answered with the scheme to add.
 */
function meantUrl(value: string): string | undefined {
  const broken = /^(https?)(?::\/{0,3}|\/{2,3})(?=[^/])/i.exec(value);
  if (broken) return `${broken[1]!.toLowerCase()}://${value.slice(broken[0].length)}`;
  if (value.startsWith('//')) return `http://${value.replace(/^\/+/, '')}`;
  return undefined;
}
