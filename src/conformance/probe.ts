import { Pool, request } from '../client/undici-pool.ts';
import { buildPath, endpoints, type EndpointName } from '../api/index.ts';
import { createRedactor } from '../api/secret-redaction.ts';
import {
  backoffDelay, isNotSentCode, networkErrorCode, parseRetryAfter, queryString, readBoundedBody, resolveClientOptions, sleep,
  type ResolvedClientOptions,
} from '../client/index.ts';
import { RequestPacer } from './request-pacer.ts';

/** Where the suite sends its requests; the same three settings as `wsmirror sync`. */
export interface EndpointTarget {
  /** Base URL without `/api/v1`. */
  baseUrl: string;
  apiKey: string;
  workspaceId: string;
}

/** What a check sends: an endpoint of `src/api/endpoints.ts` and its parts. */
export interface ProbeRequest {
  /** Path parameters other than the workspace id (which the probe fills in unless given). */
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  /** A JSON body. */
  body?: unknown;
  /** A body sent as is (malformed JSON, bytes that are not UTF-8, a huge payload); `content-type` stays JSON unless `headers` says otherwise. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** `none` sends no Authorization header; `wrong` sends a key that is not the configured one. */
  auth?: 'key' | 'none' | 'wrong';
  /** Sent once: a request that gets no answer is not sent again (for checks that the answer arrives at all). */
  once?: true;
}

interface Answer {
  status: number;
  body: unknown;
  json: boolean;
  retryAfter: string | string[] | undefined;
}

/** One request and its answer, as a failed check shows it. */
export interface Exchange<N extends EndpointName = EndpointName> {
  endpoint: N;
  method: string;
  /** Path with its query string, relative to the base URL. */
  target: string;
  /** The start of the request body, for the report. */
  requestBody: string | undefined;
  status: number;
  /** The parsed JSON answer, or its text when it is not JSON. */
  body: unknown;
  /** Whether the answer was JSON. */
  json: boolean;
}

export interface ProbeOptions {
  /** Requests per second at most (0 = unbounded). */
  rate: number;
  /** Per-request time limit. Default 30 s. */
  timeoutMs?: number;
  /** Retries of a 429 or 503 before the answer is taken as it is. Default 5. */
  maxRateLimitRetries?: number;
  /** A `Retry-After` longer than this is not waited out. Default 120 s. */
  retryAfterMaxMs?: number;
}

export interface ProbeStats {
  requests: number;
  /** Answers 429/503 that were waited out and repeated. */
  rateLimited: number;
}

// Bodies shown in reports are cut here; the answer read is bounded separately.
const EXCERPT_CHARS = 400;
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const MAX_NETWORK_RETRIES = 2;
// A key the endpoint cannot know: the suite's own 401 probe.
const WRONG_KEY = 'wsmirror-conformance-not-a-key';

/**
 * Sends the suite's requests exactly as written (the client refuses what the suite must send:
 * bodies the API forbids, requests without a key) and keeps each answer whole. Paced to the
 * configured rate; a 429 or 503 is waited out (its `Retry-After`, else a backoff) and repeated,
 * so a rate limit never reads as a broken rule.
 */
export class Probe {
  readonly workspaceId: string;
  readonly stats: ProbeStats = { requests: 0, rateLimited: 0 };
  readonly #options: ResolvedClientOptions;
  readonly #pool: Pool;
  readonly #pacer: RequestPacer;
  readonly #redact: (text: string) => string;
  readonly #probe: Required<ProbeOptions>;

  constructor(target: EndpointTarget, options: ProbeOptions) {
    this.#options = resolveClientOptions(target);
    this.workspaceId = this.#options.workspaceId;
    this.#probe = { timeoutMs: 30_000, maxRateLimitRetries: 5, retryAfterMaxMs: 120_000, ...options };
    this.#pool = new Pool(this.#options.origin, { connections: 1 });
    this.#pacer = new RequestPacer(options.rate);
    this.#redact = createRedactor([this.#options.apiKey]);
  }

  /** Text safe to print: the API key never appears in it. */
  redact(text: string): string {
    return this.#redact(text);
  }

  /** One exchange; `signal` aborts it (and any wait before it). Network errors reject. */
  async send<N extends EndpointName>(endpoint: N, request: ProbeRequest = {}, signal?: AbortSignal): Promise<Exchange<N>> {
    const def = endpoints[endpoint];
    const path = this.#options.pathPrefix + buildPath(def.path, { workspaceId: this.workspaceId, ...request.params });
    const target = path + queryString(request.query);
    const text = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'wsmirror-conformance' };
    if (request.auth === undefined || request.auth === 'key') headers.authorization = `Bearer ${this.#options.apiKey}`;
    if (request.auth === 'wrong') headers.authorization = `Bearer ${WRONG_KEY}`;
    if (text !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, request.headers);
    const shownTarget = this.#options.pathPrefix === '' ? target : target.slice(this.#options.pathPrefix.length);

    for (let attempt = 1; ; attempt++) {
      await this.#pacer.wait(signal);
      this.stats.requests++;
      let answer: Answer;
      try {
        answer = await this.#attempt(def.method, target, headers, text, signal);
      } catch (error) {
        if (signal?.aborted) throw error;
        // A kept-alive connection the server closed meanwhile is the transport's trouble, not the
        // endpoint's: repeated like the client does (a POST only when it cannot have been sent).
        const code = networkErrorCode(error);
        const repeatable = request.once !== true && (def.method !== 'POST' || isNotSentCode(code));
        if (repeatable && attempt <= MAX_NETWORK_RETRIES) {
          await sleep(backoffDelay(attempt, 200, 2000) + 100, signal);
          continue;
        }
        // No answer at all: the report names the request that got none.
        throw new Error(this.#redact(`${def.method} ${shownTarget}: no answer: ${error instanceof Error ? error.message : String(error)} (${code})`), { cause: error });
      }
      const limited = answer.status === 429 || answer.status === 503;
      if (limited && attempt <= this.#probe.maxRateLimitRetries) {
        const retryAfter = parseRetryAfter(answer.retryAfter);
        if (retryAfter === undefined || retryAfter <= this.#probe.retryAfterMaxMs) {
          this.stats.rateLimited++;
          await sleep(retryAfter ?? backoffDelay(attempt, 1000, 30_000) + 500, signal);
          continue;
        }
      }
      return {
        endpoint, method: def.method, target: shownTarget,
        requestBody: text === undefined ? undefined : excerpt(this.#redact(typeof text === 'string' ? text : Buffer.from(text).toString('utf8'))),
        status: answer.status, body: answer.body, json: answer.json,
      };
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #attempt(
    method: string, path: string, headers: Record<string, string>, body: string | Uint8Array | undefined, signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const timeout = AbortSignal.timeout(this.#probe.timeoutMs);
    const res = await request(this.#pool, {
      path, method: method as 'GET', headers, body: body ?? null,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      headersTimeout: this.#probe.timeoutMs, bodyTimeout: this.#probe.timeoutMs,
    });
    const bytes = await readBoundedBody(res.body, MAX_RESPONSE_BYTES, res.headers['content-length']);
    const raw = bytes.toString('utf8');
    let parsed: unknown = this.#redact(raw);
    let json = false;
    try {
      parsed = JSON.parse(raw);
      json = true;
    } catch {
      // Kept as text: the check reports it.
    }
    return { status: res.statusCode, body: parsed, json, retryAfter: res.headers['retry-after'] };
  }
}

/** A short, one-line rendering of a body for a report. */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}… (${text.length} characters)` : flat;
}
