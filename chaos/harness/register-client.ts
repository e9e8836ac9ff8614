import { connect, type Socket } from 'node:net';
import { encodeWrite, type WriteRequest } from './register-protocol';

/** A client process's one connection to the register: writes in order, replies matched in order. */
export class RegisterClient {
  private readonly socket: Socket;
  private readonly pending: Array<{ resolve: (accepted: boolean) => void; reject: (err: Error) => void }> = [];
  private buffer = '';
  private failure: Error | null = null;
  private readonly connected: Promise<void>;

  constructor(port: number) {
    this.socket = connect({ host: '127.0.0.1', port });
    this.socket.setNoDelay(true);
    this.socket.setEncoding('utf8');
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: string) => this.onData(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('register connection closed')));
  }

  ready(): Promise<void> {
    return this.connected;
  }

  /** Resolves true when the register accepted the write, false when it refused it. */
  write(req: WriteRequest): Promise<boolean> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.socket.write(encodeWrite(req));
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      const waiter = this.pending.shift();
      if (!waiter) continue;
      if (line === 'A') waiter.resolve(true);
      else if (line.startsWith('R')) waiter.resolve(false);
      else waiter.reject(new Error(`register: ${line}`));
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const waiter of this.pending.splice(0)) waiter.reject(err);
  }
}
