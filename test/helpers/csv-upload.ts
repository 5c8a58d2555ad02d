import { request } from 'node:http';
import type { Readable } from 'node:stream';
import type { ApiResponse, EmulatorEndpoint } from './emulator.ts';
import { recordsPath } from './schema.ts';

/** `…/records/import/csv` of a table, relative to the host. */
export function importPath(emu: EmulatorEndpoint, module: string, table: string): string {
  return `${emu.base}/${recordsPath(module, table)}/import/csv`;
}

/**
 * Posts a CSV import as a browser would: a multipart form with the option parts, then the file
 * (a part with a filename). Options are sent as given, so suites send bad ones too.
 */
export async function postCsv<T = any>(
  emu: EmulatorEndpoint,
  module: string,
  table: string,
  file: string | Uint8Array | undefined,
  parts: Record<string, string> = {},
  token: string | null = emu.apiKey,
): Promise<ApiResponse<T>> {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) form.append(name, value);
  if (file !== undefined) form.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)], { type: 'text/csv' }), 'data.csv');
  const res = await fetch(`${emu.url}${importPath(emu, module, table)}`, {
    method: 'POST',
    body: form,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: res.status, headers: res.headers, body: body as T };
}

export interface RawUploadResult {
  status: number | undefined;
  body: string;
  /** Body bytes the socket accepted before the exchange ended. */
  sent: number;
  /** Whether the server closed the connection before the whole body was sent. */
  cutOff: boolean;
}

/**
 * A raw HTTP/1.1 POST whose body comes from `body` (chunked unless `contentLength` is given),
 * reporting how much of it the server took before answering and closing. For the tests of what
 * is refused before or while the body is read.
 */
export function rawUpload(
  emu: EmulatorEndpoint,
  path: string,
  headers: Record<string, string>,
  body: Readable | undefined,
  contentLength?: number,
): Promise<RawUploadResult> {
  return new Promise((resolve, reject) => {
    const url = new URL(emu.url);
    let sent = 0;
    let status: number | undefined;
    let text = '';
    let settled = false;
    let req: ReturnType<typeof request>;
    const finish = (cutOff: boolean) => {
      if (settled) return;
      settled = true;
      body?.destroy();
      req.destroy();
      resolve({ status, body: text, sent, cutOff });
    };
    req = request({
      host: url.hostname,
      port: url.port,
      path,
      method: 'POST',
      headers: { ...headers, ...(contentLength === undefined ? {} : { 'content-length': String(contentLength) }) },
    });
    req.on('response', (res) => {
      status = res.statusCode;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => finish(!req.writableFinished));
      res.on('error', () => finish(true));
    });
    req.on('error', (error) => {
      if (status !== undefined) finish(true);
      else if (!settled) reject(error);
    });
    if (!body) {
      req.flushHeaders();
      return;
    }
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      sent += chunk.length;
      if (!req.write(chunk)) {
        body.pause();
        req.once('drain', () => body.resume());
      }
    });
    body.on('end', () => req.end());
  });
}
