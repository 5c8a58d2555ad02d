/**
 * Failures whose cause is most likely a setting say which one to fix: a refused key names where
 * the key came from and the variables that set it; an unreachable upstream names the base URL and
 * WSMIRROR_BASE_URL; an unknown workspace names WSMIRROR_WORKSPACE_ID. Applied wherever a failure
 * reaches the user: the start-up check, each cycle's problems, `/readyz`.
 */
import { NetworkError, UpstreamError, WsmirrorError } from '../errors.ts';
import { displayBaseUrl } from '../client/base-url.ts';
import type { UpstreamConfig } from './config-types.ts';

type Upstream = Pick<UpstreamConfig, 'baseUrl' | 'apiKeySource' | 'workspaceId'>;

/** The client's message for a body over upstream.maxResponseBytes (client/bounded-body.ts). */
const TOO_LARGE = /response body exceeds the \d+-byte limit/;
/** The client's message for a body the heap could not hold once parsed (client/heap-headroom.ts). */
const OVER_HEAP = /more than this process's heap limit of \d+ MB/;
const KEY_SETTINGS = 'WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE (upstream.apiKey or upstream.apiKeyFile)';
// Network failures where the address itself is the likely mistake, not a passing outage.
const UNREACHABLE = /^(?:ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNRESET|UND_ERR_CONNECT_TIMEOUT|TIMEOUT|CERT_|ERR_TLS|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_VERIFY)/;

/**
 * The message of a failure, with the setting to fix when its code points at one. `code` is the
 * error's stable code; `causeCode` the system code of a network failure, when known.
 */
export function explainFailure(failure: { code: string; message: string; causeCode?: string | undefined }, upstream: Upstream): string {
  const { code, message } = failure;
  if (code === 'UPSTREAM_UNAUTHORIZED') {
    // Upstream's own text is left out: it tends to quote the header to send, which reads like a leak once redacted.
    return `upstream refused the API key (HTTP 401) from ${upstream.apiKeySource}: set a valid key in ${KEY_SETTINGS}`;
  }
  if (code === 'UPSTREAM_FORBIDDEN') {
    return `${message}: the API key from ${upstream.apiKeySource} lacks a grant this needs; give the key that grant, or set another key in ${KEY_SETTINGS}`;
  }
  if (code === 'INVALID_RESPONSE' && TOO_LARGE.test(message)) {
    return `${message}; lower sync.pageSize (WSMIRROR_SYNC_PAGE_SIZE), or raise upstream.maxResponseBytes (WSMIRROR_UPSTREAM_MAX_RESPONSE_BYTES) and the heap with it`;
  }
  if (code === 'INVALID_RESPONSE' && OVER_HEAP.test(message)) {
    return `${message}; if upstream really holds that much, raise the heap above it: NODE_OPTIONS=--max-old-space-size=<MB> (docs/operations.md)`;
  }
  if (code === 'NETWORK' && (failure.causeCode === undefined || UNREACHABLE.test(failure.causeCode))) {
    return `cannot reach upstream at ${displayBaseUrl(upstream.baseUrl)}: ${message}; check WSMIRROR_BASE_URL (upstream.baseUrl) and that the server is up`;
  }
  return message;
}

/** The same error with the setting named (same code, the original as its cause). */
export function withSettingHint(error: unknown, upstream: Upstream, options: { workspaceCheck?: boolean } = {}): unknown {
  if (!(error instanceof WsmirrorError)) return error;
  const causeCode = error instanceof NetworkError ? error.causeCode : undefined;
  let message = explainFailure({ code: error.code, message: error.message, causeCode }, upstream);
  if (options.workspaceCheck && error instanceof UpstreamError && error.status === 404) {
    // The URL asked is made of both settings: a wrong path in the base URL answers 404 as well.
    const asked = `GET ${displayBaseUrl(upstream.baseUrl)}/api/v1/workspace/${upstream.workspaceId}`;
    message = `upstream has no workspace ${upstream.workspaceId} (HTTP 404 for ${asked}): check WSMIRROR_WORKSPACE_ID `
      + '(upstream.workspaceId), and that WSMIRROR_BASE_URL (upstream.baseUrl) is the API\'s base URL, without /api/v1';
  }
  if (message === error.message) return error;
  return new WsmirrorError(error.code, message, { cause: error });
}
