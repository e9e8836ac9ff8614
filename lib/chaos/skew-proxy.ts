/**
 * Clock-rate skew, modelled in the network. A node whose clock runs fast by a rate ρ expires a
 * key set with PX ttl after ttl / (1 + ρ) of real time. This proxy gives a node exactly that
 * behaviour for the lock core's leases: it shortens the ttl of the grant (the PX of SET … NX …, and
 * ARGV[2] of the acquire and extend scripts) by floor(ttl × ρ) on its way to the node. Everything
 * else passes unchanged.
 * (One host has one clock, so real drift cannot be produced between local processes.)
 */
import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeCommand, RespRequestParser } from './resp';

export interface SkewProxyOptions {
  targetPort: number;
  /** SHA1s of the scripts whose ARGV[2] is a lease ttl (acquire and extend). */
  leaseScriptShas: readonly string[];
}

export class SkewProxy {
  /** Fraction by which this node's clock runs fast; 0 passes leases unchanged. */
  rate = 0;
  /** Leases shortened so far. */
  rewritten = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly shas: Set<string>;

  constructor(private readonly options: SkewProxyOptions) {
    this.shas = new Set(options.leaseScriptShas.map((s) => s.toLowerCase()));
  }

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
    if (!address || typeof address !== 'object') throw new Error('skew proxy is not started');
    return address.port;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    return server ? new Promise((resolve) => server.close(() => resolve())) : Promise.resolve();
  }

  /** The command with its lease shortened, or null to pass it unchanged. */
  private rewrite(args: Buffer[]): Buffer[] | null {
    if (this.rate <= 0 || args.length < 3) return null;
    const name = args[0]!.toString('latin1').toLowerCase();
    let ttlIndex: number;
    if (name === 'set') {
      // The single-resource grant: SET <lock> '<token> <metadata>' NX GET PX <ttl> (a fence or extend
      // rewrite of the value is SET … KEEPTTL, without NX or PX).
      const words = args.map((a) => a.toString('latin1').toLowerCase());
      if (!words.includes('nx')) return null;
      ttlIndex = words.indexOf('px', 3) + 1;
      if (ttlIndex === 0) return null;
    } else {
      let sha: string;
      if (name === 'evalsha') sha = args[1]!.toString('latin1').toLowerCase();
      else if (name === 'eval') sha = createHash('sha1').update(args[1]!).digest('hex');
      else return null;
      if (!this.shas.has(sha)) return null;
      ttlIndex = 3 + Number(args[2]!.toString('latin1')) + 1;
    }
    const ttl = Number(args[ttlIndex]?.toString('latin1'));
    if (!Number.isInteger(ttl) || ttl <= 0) return null;
    const out = args.slice();
    out[ttlIndex] = Buffer.from(String(Math.max(1, ttl - Math.floor(ttl * this.rate))), 'latin1');
    this.rewritten++;
    return out;
  }

  private accept(client: Socket): void {
    const upstream = connect({ host: '127.0.0.1', port: this.options.targetPort });
    this.sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const parser = new RespRequestParser();
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      let commands: Buffer[][];
      try {
        commands = parser.push(chunk);
      } catch {
        end();
        return;
      }
      const parts = commands.map((args) => encodeCommand(this.rewrite(args) ?? args));
      if (parts.length) upstream.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  }
}
