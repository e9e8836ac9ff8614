import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';

/**
 * The lean connections in front of Node's HTTP server (lib/server/lock-service/lean-connection.ts),
 * over raw sockets against real masters: pipelining, requests split across packets, the handoff
 * to Node's parser in the middle of a connection (the rest of the buffer included), answers the
 * same as Node's path, slow and idle clients, and a smuggling attempt.
 */
let api: ApiHarness;
let server: LockServiceServer;
let slow: LockServiceServer;

beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
  server = await startLockServiceServer();
  slow = await startLockServiceServer({ keepAliveMs: 600, headersMs: 700 });
});
afterAll(async () => {
  await slow?.close();
  await server?.close();
  await api?.stop();
});

function post(path: string, body: unknown, extra = ''): string {
  const text = JSON.stringify(body);
  return (
    `POST ${path} HTTP/1.1\r\nHost: console.test\r\nAuthorization: Bearer ${API_KEY}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${extra}\r\n${text}`
  );
}

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** A raw connection that collects every answer (framed by Content-Length) and notices its close. */
class Raw {
  readonly socket: Socket;
  private data = Buffer.alloc(0);
  readonly answers: Answer[] = [];
  /** 1xx answers skipped (a server probing whether a half-closed client is still there). */
  interim = 0;
  closed = false;
  private readonly opened: Promise<void>;

  /** `halfOpen`: keep sending after the server's FIN (as a client may). */
  constructor(port: number, halfOpen = false) {
    this.socket = connect({ host: '127.0.0.1', port, allowHalfOpen: halfOpen });
    this.opened = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (chunk: Buffer) => {
      this.data = Buffer.concat([this.data, chunk]);
      for (;;) {
        const end = this.data.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = this.data.toString('latin1', 0, end).split('\r\n');
        const headers = new Map<string, string>();
        for (const line of lines.slice(1))
          headers.set(line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim());
        // Node's own answers without a body may come chunked: their body is the last chunk alone.
        const chunked = headers.get('transfer-encoding') === 'chunked';
        const length = chunked ? this.data.indexOf('0\r\n\r\n', end + 4) + 5 - (end + 4) : Number(headers.get('content-length') ?? 0);
        if (length < 0 || this.data.length < end + 4 + length) return;
        // An interim answer (1xx) is skipped, as every HTTP/1.1 client does.
        if (lines[0]!.startsWith('HTTP/1.1 1')) {
          this.interim++;
          this.data = this.data.subarray(end + 4);
          continue;
        }
        this.answers.push({
          status: Number(lines[0]!.split(' ')[1]),
          headers,
          body: this.data.toString('utf8', end + 4, end + 4 + length),
        });
        this.data = this.data.subarray(end + 4 + length);
      }
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closed = true));
  }

  async write(text: string): Promise<void> {
    await this.opened;
    this.socket.write(text);
  }

  async until(check: () => boolean, ms = 5_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`timed out; answers so far: ${JSON.stringify(this.answers.map((a) => [a.status, a.body]))}`);
      // poll: until()'s interval
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

const tokenOf = (a: Answer) => (JSON.parse(a.body) as { token: string }).token;

describe('lean connections: plain lock-service requests answered on the socket', () => {
  it('answers pipelined requests in order, one write carrying three of them', async () => {
    const raw = new Raw(server.port);
    await raw.write(post('/api/locks', { resource: 'lean-p1', ttlMs: 5_000 }));
    await raw.until(() => raw.answers.length === 1);
    const token = tokenOf(raw.answers[0]!);
    await raw.write(
      post('/api/locks', { resource: 'lean-p1', ttlMs: 5_000 }) + // contended: 409
        post('/api/locks/lean-p1/release', { token }) +
        post('/api/locks', { resource: 'lean-p1', ttlMs: 5_000 }),
    );
    await raw.until(() => raw.answers.length === 4);
    expect(raw.answers.map((a) => a.status)).toEqual([200, 409, 200, 200]);
    expect(JSON.parse(raw.answers[2]!.body)).toMatchObject({ released: true });
    await raw.write(post('/api/locks/lean-p1/release', { token: tokenOf(raw.answers[3]!) }));
    await raw.until(() => raw.answers.length === 5);
    expect(raw.closed).toBe(false); // keep-alive
    raw.close();
  });

  it('reads a request that arrives a few bytes at a time', async () => {
    const raw = new Raw(server.port);
    const text = post('/api/locks', { resource: 'lean-split', ttlMs: 5_000 });
    for (let i = 0; i < text.length; i += 7) {
      await raw.write(text.slice(i, i + 7));
      // pace: a few bytes at a time
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await raw.until(() => raw.answers.length === 1);
    expect(raw.answers[0]!.status).toBe(200);
    await raw.write(post('/api/locks/lean-split/release', { token: tokenOf(raw.answers[0]!) }));
    await raw.until(() => raw.answers.length === 2);
    raw.close();
  });

  it('hands the connection to Node at the first other request, with the bytes behind it, and keeps answering in order', async () => {
    const raw = new Raw(server.port);
    // lean, then a request only Node's parser reads (chunked), then a plain one: all in one write.
    const chunkedBody = JSON.stringify({ resource: 'lean-mixed-2', ttlMs: 5_000 });
    await raw.write(
      post('/api/locks', { resource: 'lean-mixed-1', ttlMs: 5_000 }) +
        `POST /api/locks HTTP/1.1\r\nHost: console.test\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n${chunkedBody.length.toString(16)}\r\n${chunkedBody}\r\n0\r\n\r\n` +
        `GET /not-the-lock-service HTTP/1.1\r\nHost: console.test\r\n\r\n` +
        post('/api/locks', { resource: 'lean-mixed-3', ttlMs: 5_000 }),
    );
    await raw.until(() => raw.answers.length === 4);
    expect(raw.answers.map((a) => a.status)).toEqual([200, 200, 404, 200]);
    for (const [i, resource] of [
      [0, 'lean-mixed-1'],
      [1, 'lean-mixed-2'],
      [3, 'lean-mixed-3'],
    ] as const) {
      expect(JSON.parse(raw.answers[i]!.body)).toMatchObject({ resources: [resource] });
      await raw.write(post(`/api/locks/${resource}/release`, { token: tokenOf(raw.answers[i]!) }));
    }
    await raw.until(() => raw.answers.length === 7);
    expect(raw.answers.slice(4).map((a) => a.status)).toEqual([200, 200, 200]);
    raw.close();
  });

  it('answers with the same status, headers and body as Node’s path (Date aside)', async () => {
    const lean = new Raw(server.port);
    const node = new Raw(server.port);
    // A refusal both paths can give without a lock: an unknown key. Node's path is reached with a
    // header the lean reader leaves to it (an X- header with obs-text is still valid HTTP to llhttp).
    const ask = (extra: string) =>
      `POST /api/locks HTTP/1.1\r\nHost: console.test\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\nContent-Length: 2\r\n${extra}\r\n{}`;
    await lean.write(ask(''));
    await node.write(ask('X-Note: caf\u00e9\r\n'));
    await lean.until(() => lean.answers.length === 1);
    await node.until(() => node.answers.length === 1);
    const [a, b] = [lean.answers[0]!, node.answers[0]!];
    expect(a.status).toBe(401);
    expect(a.status).toBe(b.status);
    expect(a.body).toBe(b.body);
    const strip = (h: Map<string, string>) => [...h].filter(([k]) => k !== 'date').sort();
    expect(strip(a.headers)).toEqual(strip(b.headers));
    lean.close();
    node.close();
  });

  it('Connection: close is answered and the connection closed', async () => {
    const raw = new Raw(server.port);
    await raw.write(post('/api/locks', { resource: 'lean-close', ttlMs: 5_000 }, 'Connection: close\r\n'));
    await raw.until(() => raw.answers.length === 1 && raw.closed);
    expect(raw.answers[0]!.headers.get('connection')).toBe('close');
    const again = new Raw(server.port);
    await again.write(post('/api/locks/lean-close/release', { token: tokenOf(raw.answers[0]!) }));
    await again.until(() => again.answers.length === 1);
    expect(again.answers[0]!.status).toBe(200);
    again.close();
  });

  it('after Connection: close nothing more is read or run, as on Node’s path (RFC 9112 §9.6)', async () => {
    const raw = new Raw(server.port, true);
    await raw.write(
      post('/api/locks', { resource: 'lean-after-close-a', ttlMs: 1_000 }, 'Connection: close\r\n') +
        post('/api/locks', { resource: 'lean-after-close-b', ttlMs: 8_000 }),
    );
    await raw.until(() => raw.answers.length === 1);
    // More bytes after the answer (the client keeps its side open): not a reason to read the
    // pipelined request either.
    await raw.write(post('/api/locks', { resource: 'lean-after-close-c', ttlMs: 8_000 }));
    // absence: 200 ms in which the pipelined request must not be read
    await new Promise((resolve) => setTimeout(resolve, 200));
    raw.socket.end();
    await raw.until(() => raw.closed);
    expect(raw.answers).toHaveLength(1);
    for (const resource of ['lean-after-close-b', 'lean-after-close-c']) {
      const check = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 1_000 } });
      expect(check.status, `${resource} was taken by a request sent after the close`).toBe(200);
      const { token } = (await check.json()) as { token: string };
      await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token } });
    }
  });

  it('a smuggling attempt (Content-Length and Transfer-Encoding) is Node’s to refuse: one 400, nothing behind it answered', async () => {
    const raw = new Raw(server.port);
    await raw.write(
      `POST /api/locks HTTP/1.1\r\nHost: console.test\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\n` +
        `Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` +
        post('/api/locks', { resource: 'lean-smuggled', ttlMs: 5_000 }),
    );
    await raw.until(() => raw.closed);
    expect(raw.answers.map((a) => a.status)).toEqual([400]);
    const check = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'lean-smuggled', ttlMs: 1_000 } });
    expect(check.status).toBe(200); // the smuggled acquire never ran
    const { token } = (await check.json()) as { token: string };
    await api.call('POST', '/api/locks/lean-smuggled/release', { as: 'client', body: { token } });
  });
});

describe('a client that half-closes after its request', () => {
  // The client sends its acquire, then its FIN (it has nothing more to say) and waits for the
  // answer: a shutdown(SHUT_WR) that curl, HTTP/1.0-era tools and some proxies do. The acquire
  // waits (waitMs) on a lock another holds, released 300 ms later: the answer comes after the FIN.
  for (const path of ['lean', 'node'] as const)
    it(`gets its answer on the ${path === 'lean' ? 'lean path' : 'Node path'}`, async () => {
      const resource = `lean-half-close-${path}`;
      const held = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 5_000 } });
      expect(held.status).toBe(200);
      const { token } = (await held.json()) as { token: string };
      const raw = new Raw(server.port, true);
      // An obs-text header is valid HTTP that the lean reader leaves to Node's parser.
      await raw.write(post('/api/locks', { resource, ttlMs: 5_000, waitMs: 3_000 }, path === 'node' ? 'X-Note: caf\u00e9\r\n' : ''));
      raw.socket.end();
      // pace: the acquire is in its wait when the release comes
      await new Promise((resolve) => setTimeout(resolve, 300));
      await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token } });
      await raw.until(() => raw.answers.length === 1 || raw.closed, 5_000);
      expect(raw.answers.map((a) => a.status)).toEqual([200]);
      await raw.until(() => raw.closed, 2_000); // then the connection closes: the client said it is done
      const released = await api.call('POST', `/api/locks/${resource}/release`, {
        as: 'client',
        body: { token: tokenOf(raw.answers[0]!) },
      });
      expect(((await released.json()) as { released: boolean }).released).toBe(true);
    });
});

describe('a client that closes its socket while its acquire waits (a FIN too, but gone)', () => {
  for (const path of ['lean', 'node'] as const)
    it(`stops the wait on the ${path === 'lean' ? 'lean path' : 'Node path'}: the probe finds it gone before the lock is free`, async () => {
      const resource = `lean-gone-${path}`;
      const held = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 8_000 } });
      const { token } = (await held.json()) as { token: string };
      const raw = new Raw(server.port);
      await raw.write(post('/api/locks', { resource, ttlMs: 8_000, waitMs: 4_000 }, path === 'node' ? 'X-Note: caf\u00e9\r\n' : ''));
      // pace: the acquire is in its wait when the client goes
      await new Promise((resolve) => setTimeout(resolve, 200));
      raw.close();
      // pace: the server sees the client gone before the release
      await new Promise((resolve) => setTimeout(resolve, 200));
      await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token } });
      // absence: 500 ms in which a departed client's acquire must not take the lock
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Had the wait gone on, the departed client's acquire would hold the lock until its ttl.
      const free = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 1_000 } });
      expect(free.status).toBe(200);
      await api.call('POST', `/api/locks/${resource}/release`, {
        as: 'client',
        body: { token: ((await free.json()) as { token: string }).token },
      });
    });
});

describe('a client that half-closes after pipelining a lock request and another', () => {
  it('gets both answers, the second from Node’s parser, handed the bytes after the FIN', async () => {
    const resource = 'lean-half-close-pipelined';
    const held = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 5_000 } });
    const { token } = (await held.json()) as { token: string };
    const raw = new Raw(server.port, true);
    await raw.write(
      post('/api/locks', { resource, ttlMs: 5_000, waitMs: 3_000 }) + 'GET /elsewhere HTTP/1.1\r\nHost: console.test\r\n\r\n',
    );
    raw.socket.end();
    // pace: the acquire is in its wait when the release comes
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token } });
    await raw.until(() => raw.answers.length === 2 && raw.closed, 5_000);
    expect(raw.answers.map((a) => a.status)).toEqual([200, 404]);
    await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token: tokenOf(raw.answers[0]!) } });
  });
});

describe('lean connections: slow and idle clients (headers 700 ms, keep-alive 600 ms)', () => {
  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const raw = new Raw(slow.port);
    await raw.write(post('/api/locks', { resource: 'lean-idle', ttlMs: 5_000 }));
    await raw.until(() => raw.answers.length === 1);
    expect(raw.answers[0]!.headers.get('keep-alive')).toBe('timeout=0');
    await raw.until(() => raw.closed, 3_000);
    await api.call('POST', '/api/locks/lean-idle/release', { as: 'client', body: { token: tokenOf(raw.answers[0]!) } });
  });

  it('closes a connection whose request trickles in slower than the headers timeout allows', async () => {
    const raw = new Raw(slow.port);
    const text = post('/api/locks', { resource: 'lean-slowloris', ttlMs: 5_000 });
    const started = Date.now();
    for (let i = 0; i < text.length && !raw.closed; i += 1) {
      await raw.write(text[i]!);
      await new Promise((resolve) => setTimeout(resolve, 150)); // pace: each byte before the idle timeout
    }
    expect(raw.closed).toBe(true);
    expect(raw.answers).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
