import { Agent, request } from 'node:http';
import { HttpConnection, type HttpAnswer } from './http-client';

/**
 * The HTTP clients programs really use, behind one interface, for the client-kind rows of the
 * http-service workload: each loop gets a poster, a row's posters are closed together.
 * - `fetch`: Node's global fetch (undici), its default pool (keep-alive), the body read as JSON;
 * - `node-http`: node:http `request` with one keep-alive Agent per row (as a service holds one);
 * - `curl`: what `curl -d … URL` does per call: a new TCP connection, one request, the answer read,
 *   the connection closed by the client. Written on a raw socket (http-client.ts) with curl's
 *   headers: spawning curl itself would spend the two shared cores on process starts.
 * - `lean`: the bench's own keep-alive socket client (http-client.ts), the earlier rows' client.
 */
export const CLIENT_KINDS = ['fetch', 'node-http', 'curl', 'lean'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

export const CLIENT_LABELS: Readonly<Record<ClientKind, string>> = {
  fetch: 'fetch (undici)',
  'node-http': 'node:http keep-alive',
  curl: 'curl-like (a connection per request)',
  lean: 'lean socket client',
};

export interface Poster {
  post(path: string, body: unknown): Promise<HttpAnswer>;
}

export interface ClientRow {
  posters: Poster[];
  close(): void;
}

/** A JSON body, or `{}` for an empty or non-JSON one (the status says what happened). */
function jsonOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function fetchRow(base: URL, headers: Record<string, string>, count: number): ClientRow {
  const poster: Poster = {
    async post(path, body) {
      const res = await fetch(new URL(path, base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: jsonOf(await res.text()) };
    },
  };
  return { posters: Array.from({ length: count }, () => poster), close: () => undefined };
}

function nodeHttpRow(base: URL, headers: Record<string, string>, count: number): ClientRow {
  const agent = new Agent({ keepAlive: true });
  const poster: Poster = {
    post(path, body) {
      const text = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: base.hostname,
            port: Number(base.port),
            path,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: jsonOf(Buffer.concat(chunks).toString('utf8')) }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(text);
      });
    },
  };
  return { posters: Array.from({ length: count }, () => poster), close: () => agent.destroy() };
}

/** curl 7.88's headers for `curl -H 'content-type: application/json' -d … URL` (Debian bookworm's). */
const CURL_HEADERS = { 'user-agent': 'curl/7.88.1', accept: '*/*' };

function curlRow(base: URL, headers: Record<string, string>, count: number): ClientRow {
  const poster: Poster = {
    async post(path, body) {
      const conn = new HttpConnection(base.hostname, Number(base.port), { ...CURL_HEADERS, ...headers });
      try {
        return await conn.post(path, body);
      } finally {
        conn.close();
      }
    },
  };
  return { posters: Array.from({ length: count }, () => poster), close: () => undefined };
}

function leanRow(base: URL, headers: Record<string, string>, count: number): ClientRow {
  const conns = Array.from({ length: count }, () => new HttpConnection(base.hostname, Number(base.port), headers));
  return { posters: conns, close: () => conns.forEach((c) => c.close()) };
}

/** `count` posters of one client kind on `base`, each request carrying `headers` (e.g. the API key). */
export function openClientRow(kind: ClientKind, base: URL, headers: Record<string, string>, count: number): ClientRow {
  switch (kind) {
    case 'fetch':
      return fetchRow(base, headers, count);
    case 'node-http':
      return nodeHttpRow(base, headers, count);
    case 'curl':
      return curlRow(base, headers, count);
    case 'lean':
      return leanRow(base, headers, count);
  }
}
