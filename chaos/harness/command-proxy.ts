/**
 * A proxy that sees a client's requests command by command (RESP arrays) on their way to one
 * redis-server, for the faults that depend on what a command is: the skew proxy shortens leases
 * (skew-proxy.ts), the stall proxy holds a script back (stall-proxy.ts). Replies pass unchanged;
 * one upstream connection per client connection, ended together.
 */
import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeCommand, RespRequestParser } from './resp';

export interface ProxiedConnection {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Destroy both sockets: whatever the proxy still holds for this connection is gone. */
  end(): void;
}

/** The SHA1 of the script an EVALSHA or EVAL runs (lower case), or null for any other command. */
export function scriptShaOf(args: readonly Buffer[]): string | null {
  if (args.length < 2) return null;
  const name = args[0]!.toString('latin1').toLowerCase();
  if (name === 'evalsha') return args[1]!.toString('latin1').toLowerCase();
  if (name === 'eval') return createHash('sha1').update(args[1]!).digest('hex');
  return null;
}

export abstract class CommandProxy {
  private server: Server | null = null;
  private readonly connections = new Set<ProxiedConnection>();

  constructor(private readonly targetPort: number) {}

  start(): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = createServer((socket) => this.accept(socket));
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        this.server = server;
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
  }

  get port(): number {
    const address = this.server?.address();
    if (!address || typeof address !== 'object') throw new Error('command proxy is not started');
    return address.port;
  }

  close(): Promise<void> {
    for (const c of [...this.connections]) c.end();
    const server = this.server;
    this.server = null;
    return server ? new Promise((resolve) => server.close(() => resolve())) : Promise.resolve();
  }

  /** The arguments to send on for one command (rewritten or as they came), or null to send nothing. */
  protected abstract forward(args: Buffer[], connection: ProxiedConnection): Buffer[] | null;

  /** A connection ended (either side closed, or end() was called). */
  protected ended(_connection: ProxiedConnection): void {}

  private accept(client: Socket): void {
    const upstream = connect({ host: '127.0.0.1', port: this.targetPort });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const parser = new RespRequestParser();
    const connection: ProxiedConnection = {
      client,
      upstream,
      end: () => {
        client.destroy();
        upstream.destroy();
        if (this.connections.delete(connection)) this.ended(connection);
      },
    };
    this.connections.add(connection);
    client.on('data', (chunk: Buffer) => {
      let commands: Buffer[][];
      try {
        commands = parser.push(chunk);
      } catch {
        connection.end();
        return;
      }
      const parts: Buffer[] = [];
      for (const args of commands) {
        const out = this.forward(args, connection);
        if (out) parts.push(encodeCommand(out));
      }
      if (parts.length) upstream.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, upstream]) {
      s.on('error', connection.end);
      s.on('close', connection.end);
    }
  }
}
