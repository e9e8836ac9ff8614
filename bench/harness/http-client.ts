import { connect, type Socket } from 'node:net';

/**
 * A minimal HTTP/1.1 keep-alive client for the HTTP workloads: one request at a time on one socket,
 * a request written as one string, the response read by its Content-Length. The bench runs on the
 * same two cores as the server it measures; Node's http client spends several times the CPU of
 * this one per request, which would be measured as the server's slowness. What a client in any
 * language does (curl, Go's net/http, Python's urllib3 with a pool) is closer to this.
 */
export class HttpConnection {
  private readonly socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { resolve: (r: HttpAnswer) => void; reject: (e: Error) => void } | null = null;
  private readonly ready: Promise<void>;

  constructor(
    private readonly host: string,
    port: number,
    private readonly headers: Record<string, string>,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  async post(path: string, body: unknown): Promise<HttpAnswer> {
    await this.ready;
    if (this.pending) throw new Error('one request at a time on a connection');
    const text = JSON.stringify(body);
    let head = `POST ${path} HTTP/1.1\r\nhost: ${this.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n`;
    for (const [name, value] of Object.entries(this.headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(`${head}\r\n${text}`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buffer.toString('latin1', 0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
    if (!Number.isFinite(length)) return this.fail(new Error(`a response without content-length: ${head.slice(0, 200)}`));
    if (this.buffer.length < end + 4 + length) return;
    const status = Number(head.slice(9, 12));
    const bodyText = this.buffer.toString('utf8', end + 4, end + 4 + length);
    this.buffer = this.buffer.subarray(end + 4 + length);
    const pending = this.pending;
    this.pending = null;
    try {
      pending?.resolve({ status, body: JSON.parse(bodyText) as Record<string, unknown> });
    } catch (err) {
      pending?.reject(err as Error);
    }
  }

  private fail(err: Error): void {
    const pending = this.pending;
    this.pending = null;
    pending?.reject(err);
  }
}

export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}
