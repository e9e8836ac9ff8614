import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeActionSchema } from '../api/node-actions';
import { nodeActionAnswer, NodeActionError } from './errors';
import type { ClusterSupervisor } from './supervisor';

const MAX_BODY_BYTES = 16 * 1024;

export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

/** Serve the supervisor's node actions on 127.0.0.1 for holders of `secret` (see control-protocol.ts). */
export async function startControlServer(supervisor: ClusterSupervisor, secret: string, port = 0): Promise<ControlServer> {
  const expected = digest(`Bearer ${secret}`);
  const server: Server = createServer((req, res) => {
    handle(supervisor, expected, req, res).catch((err: unknown) => {
      send(res, 500, { error: { code: 'INTERNAL', message: (err as Error).message } });
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(supervisor: ClusterSupervisor, expected: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
    return send(res, 401, { error: { code: 'UNAUTHORIZED', message: 'missing or wrong control secret' } });
  }
  const url = new URL(req.url ?? '/', 'http://control');
  if (req.method === 'GET' && url.pathname === '/v1/nodes') {
    return send(res, 200, { nodes: supervisor.nodes() });
  }
  const match = /^\/v1\/nodes\/(\d{1,2})\/actions$/.exec(url.pathname);
  if (req.method === 'POST' && match) {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      return send(res, 400, { error: { code: 'BAD_REQUEST', message: `body is not JSON: ${(err as Error).message}` } });
    }
    const parsed = nodeActionSchema.safeParse(body);
    if (!parsed.success) {
      return send(res, 400, {
        error: { code: 'BAD_ACTION', message: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') },
      });
    }
    try {
      const node = await supervisor.act(Number(match[1]), parsed.data);
      return send(res, 200, { node });
    } catch (err) {
      if (err instanceof NodeActionError) {
        const answer = nodeActionAnswer(err);
        return send(res, answer.status, answer.body);
      }
      throw err;
    }
  }
  return send(res, 404, { error: { code: 'NOT_FOUND', message: `no route ${req.method} ${url.pathname}` } });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8') || '{}'));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
