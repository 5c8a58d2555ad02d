import type * as z from 'zod';
import { buildPath, endpoints, type Endpoint, type EndpointName, type HttpMethod } from '../api/endpoints.ts';
import type { ResponseCheck } from '../api/record-page-check.ts';
import { describeIssues } from '../api/issues.ts';
import { InvalidResponseError, NetworkError, UpstreamError, type UpstreamCall } from '../errors.ts';
import type { Readable } from 'node:stream';
import { BodyTooLargeError, readBodyPrefix, readBoundedBody } from './bounded-body.ts';
import { describeShortfall, heapShortfall } from './heap-headroom.ts';
import type { RequestInfo, ResolvedClientOptions } from './client-options.ts';
import { ConcurrencyLimit } from './concurrency-limit.ts';
import { Pool, request } from './undici-pool.ts';
import type { UploadBody } from './multipart-upload.ts';
import {
  backoffDelay, defaultRetryMode, heededRetryAfter, isNotSentCode, isRetryable, networkErrorCode, parseRetryAfter,
  type AttemptFailure, type RetryMode,
} from './retry-policy.ts';
import { createRedactor, type Redactor } from '../api/secret-redaction.ts';
import { ERROR_BODY_LIMIT, bodyExcerpt, errorMessage, isBinaryDescription, textExcerpt, type BodyHeaders } from './body-excerpt.ts';

/** The validated response body of an endpoint. */
export type EndpointResponse<N extends EndpointName> = z.output<(typeof endpoints)[N]['response']>;

export type QueryValue = string | number | undefined;

/** Per-call options of every client method. */
export interface CallOptions {
  /** Overrides the method's default retry mode (see `RetryMode`). */
  retry?: RetryMode;
  /** Aborts the call, including its retries and backoff; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt time limit (a large upload needs longer). */
  timeoutMs?: number;
  /** Told the size of the successful answer's body, in bytes, before it is parsed. */
  onBodyBytes?: (bytes: number) => void;
}

export interface RequestSpec {
  params: Record<string, string>;
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  body?: unknown;
  /** A streamed body in its own content type, opened afresh for each attempt. */
  upload?: UploadBody;
}

interface AttemptBody {
  contentType: string;
  length?: number;
  data: string | Readable;
}

type Outcome =
  | { ok: true; value: unknown; status: number }
  | { ok: false; error: Error; failure: AttemptFailure; status: number | 'network'; retryAfterMs?: number | undefined };

const USER_AGENT = 'wsmirror';
// Fatal: a body that is not UTF-8 is refused, not patched with U+FFFD. One decoder serves every
// response: without `stream` a decode keeps no state between calls.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Sends endpoint requests over one keep-alive undici pool: concurrency limit, per-attempt
 * timeout, retries with backoff and `Retry-After`, bounded bodies, response validation.
 */
export class HttpTransport {
  readonly #options: ResolvedClientOptions;
  readonly #pool: Pool;
  readonly #limit: ConcurrencyLimit;
  readonly #redact: Redactor;
  readonly #authorization: string;
  // A Retry-After holds back every request, not only the one that got it.
  #pausedUntil = 0;

  constructor(options: ResolvedClientOptions) {
    this.#options = options;
    this.#limit = new ConcurrencyLimit(options.concurrency);
    this.#redact = createRedactor([options.apiKey]);
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#pool = new Pool(options.origin, {
      connections: options.concurrency,
      connectTimeout: options.timeoutMs,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** Names a request the way errors do: endpoint, method, path (no query, no headers). */
  describe(name: EndpointName, params: Record<string, string>): UpstreamCall {
    const endpoint = endpoints[name];
    return { endpoint: name, method: endpoint.method, path: this.#options.pathPrefix + buildPath(endpoint.path, params) };
  }

  async call<N extends EndpointName>(name: N, spec: RequestSpec, callOptions: CallOptions = {}): Promise<EndpointResponse<N>> {
    const endpoint = endpoints[name];
    const method: HttpMethod = endpoint.method;
    const call = this.describe(name, spec.params);
    const { path } = call;
    const target = path + queryString(spec.query);
    const json = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const { upload } = spec;
    const bodyOf = (): AttemptBody | undefined =>
      upload ? { contentType: upload.contentType, length: upload.length, data: upload.open() }
        : json === undefined ? undefined : { contentType: 'application/json', data: json };
    const timeoutMs = callOptions.timeoutMs ?? this.#options.timeoutMs;
    const mode = callOptions.retry ?? defaultRetryMode(method);
    const { signal } = callOptions;
    const { maxRetries, retryBaseMs, retryMaxMs, retryAfterMaxMs } = this.#options;

    for (let attempt = 1; ; attempt++) {
      await this.#waitForPause(signal);
      const release = await this.#limit.acquire(signal);
      const started = performance.now();
      let outcome: Outcome;
      try {
        outcome = await this.#attempt(call, target, bodyOf(), responseCheckOf(endpoint), attempt, signal, timeoutMs, callOptions.onBodyBytes);
      } finally {
        release();
      }
      const durationMs = performance.now() - started;

      let willRetry = false;
      let delayMs = 0;
      if (!outcome.ok) {
        const retryAfter = outcome.retryAfterMs;
        willRetry = attempt <= maxRetries && isRetryable(outcome.failure, mode)
          && (retryAfter === undefined || !heededRetryAfter(retryAfter, retryAfterMaxMs).beyond);
        if (willRetry) {
          delayMs = retryAfter ?? backoffDelay(attempt, retryBaseMs, retryMaxMs);
          if (retryAfter !== undefined) this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + retryAfter);
        }
      }
      this.#report({ endpoint: name, method, status: outcome.status, durationMs, attempt, willRetry });
      this.#options.logger?.debug(
        { endpoint: name, method, path, status: outcome.status, durationMs: Math.round(durationMs), attempt },
        'upstream request',
      );
      if (outcome.ok) return outcome.value as EndpointResponse<N>;
      if (!willRetry) throw outcome.error;
      this.#options.logger?.warn(
        { endpoint: name, method, path, status: outcome.status, attempt, delayMs, err: outcome.error.message },
        'upstream request failed; retrying',
      );
      await sleep(delayMs, signal);
    }
  }

  /** Closes the pool after in-flight requests finish. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #attempt(
    call: UpstreamCall, target: string, body: AttemptBody | undefined, schema: ResponseCheck, attempt: number,
    callerSignal: AbortSignal | undefined, timeoutMs: number, onBodyBytes: ((bytes: number) => void) | undefined,
  ): Promise<Outcome> {
    // One signal for the attempt, aborted by its deadline or by the caller: a listener removed
    // when the attempt ends, not AbortSignal.any, which registers every attempt's signal with the
    // caller's long-lived one (a weak reference each, left for the collector).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('request timed out')), timeoutMs);
    const onCallerAbort = () => deadline.abort(callerSignal!.reason);
    if (callerSignal?.aborted) onCallerAbort();
    else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const signal = deadline.signal;
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    if (body !== undefined) headers['content-type'] = body.contentType;
    if (body?.length !== undefined) headers['content-length'] = String(body.length);
    let status: number | undefined;
    try {
      const res = await request(this.#pool, {
        path: target, method: call.method, headers, body: body?.data ?? null, signal,
        headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      if (status >= 200 && status < 300) {
        // The body's bytes and then its text are each garbage as soon as the next form is made:
        // neither is held by this frame (a page of large records is tens of MB in each form).
        const json = this.#parse(call, await this.#readText(call, res.body, res.headers, onBodyBytes), res.headers);
        return { ok: true, status, value: this.#check(call, json, schema) };
      }
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      let message = res.statusText ?? '';
      try {
        message = errorMessage(await readBodyPrefix(res.body, ERROR_BODY_LIMIT), res.headers, this.#redact) || message;
      } catch {
        // The status is what matters; a body cut short adds nothing.
      }
      const error = new UpstreamError(call, status, this.#redact(message), { attempts: attempt, retryAfterMs });
      return { ok: false, status, error, failure: { kind: 'status', status }, retryAfterMs };
    } catch (err) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (err instanceof InvalidResponseError) return { ok: false, status: status ?? 'network', error: err, failure: { kind: 'final' } };
      if (err instanceof BodyTooLargeError) {
        const error = new InvalidResponseError(call, 'too-large', err.message);
        return { ok: false, status: status ?? 'network', error, failure: { kind: 'final' } };
      }
      return { ok: false, status: 'network', ...this.#networkFailure(call, err, attempt, deadline.signal.aborted, timeoutMs) };
    } finally {
      if (body && typeof body.data !== 'string') body.data.destroy();
      callerSignal?.removeEventListener('abort', onCallerAbort);
      clearTimeout(timer);
    }
  }

  #networkFailure(
    call: UpstreamCall, err: unknown, attempt: number, timedOut: boolean, timeoutMs: number,
  ): { error: Error; failure: AttemptFailure } {
    const code = timedOut ? 'TIMEOUT' : networkErrorCode(err);
    const timeout = timedOut || /TIMEOUT/.test(code);
    // Misuse of the client (closed pool, bad argument) is no network trouble: never retried.
    const final = code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_INVALID_ARG';
    const reason = err instanceof Error && err.message !== '' ? err.message : String(err);
    const detail = timedOut ? `no complete response within ${timeoutMs} ms` : `${reason} (${code})`;
    const error = new NetworkError(call, this.#redact(detail), {
      attempts: attempt, timeout, causeCode: code, cause: timedOut ? undefined : err,
    });
    const failure: AttemptFailure = final ? { kind: 'final' } : { kind: 'network', notSent: isNotSentCode(code) };
    return { error, failure };
  }

  /** A success body as text; within the heap's reach, and UTF-8, or not JSON. */
  async #readText(
    call: UpstreamCall, body: Readable, headers: BodyHeaders, onBodyBytes: ((bytes: number) => void) | undefined,
  ): Promise<string> {
    const bytes = await readBoundedBody(body, this.#options.maxResponseBytes, headers['content-length']);
    onBodyBytes?.(bytes.length);
    const shortfall = heapShortfall(bytes);
    if (shortfall !== undefined) throw new InvalidResponseError(call, 'too-large', describeShortfall(shortfall));
    try {
      return UTF8.decode(bytes);
    } catch {
      throw this.#notJson(call, bodyExcerpt(bytes.subarray(0, ERROR_BODY_LIMIT), bytes.length, headers, this.#redact));
    }
  }

  #parse(call: UpstreamCall, text: string, headers: BodyHeaders): unknown {
    try {
      return JSON.parse(text);
    } catch {
      const start = text.slice(0, ERROR_BODY_LIMIT);
      throw this.#notJson(call, textExcerpt(start, start.length === text.length, Buffer.byteLength(text), headers, this.#redact));
    }
  }

  /** `shown`: the body as messages show it (`bodyExcerpt`). */
  #notJson(call: UpstreamCall, shown: string): InvalidResponseError {
    const what = shown === '' ? 'empty body' : `not JSON: ${isBinaryDescription(shown) ? shown : JSON.stringify(shown)}`;
    return new InvalidResponseError(call, 'not-json', this.#redact(what));
  }

  #check(call: UpstreamCall, json: unknown, schema: ResponseCheck): unknown {
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new InvalidResponseError(call, 'schema', this.#redact(describeIssues(parsed.error.issues, 'response')));
    }
    return parsed.data;
  }

  async #waitForPause(signal: AbortSignal | undefined): Promise<void> {
    const wait = this.#pausedUntil - Date.now();
    if (wait > 0) await sleep(wait, signal);
  }

  #report(info: RequestInfo): void {
    try {
      this.#options.onRequest?.(info);
    } catch {
      // A broken metrics hook must not break requests.
    }
  }
}

/** An endpoint's own response check when it has one, else its schema. */
function responseCheckOf(endpoint: Endpoint): ResponseCheck {
  return endpoint.check ?? endpoint.response;
}

/** `?a=1&b=2` of the defined values, or nothing. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
