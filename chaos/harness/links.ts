import { FaultProxy, type FaultMode } from '../../lib/faults';
import { SkewProxy } from './skew-proxy';

/**
 * Per-client network links: one FaultProxy per (client, node), straight to the node's
 * redis-server, so that each client can be given its own view of the cluster (ring partitions).
 */
export class ClientLinks {
  private constructor(private readonly proxies: FaultProxy[][]) {}

  static async start(clients: number, redisPorts: readonly number[]): Promise<ClientLinks> {
    const proxies: FaultProxy[][] = [];
    try {
      for (let c = 0; c < clients; c++) {
        const row: FaultProxy[] = [];
        proxies.push(row);
        for (let n = 0; n < redisPorts.length; n++) {
          const proxy = new FaultProxy({ name: `client-${c + 1}→node-${n + 1}`, targetPort: redisPorts[n]! });
          proxy.on('connection-error', () => undefined);
          await proxy.start();
          row.push(proxy);
        }
      }
    } catch (err) {
      await Promise.all(proxies.flat().map((p) => p.close()));
      throw err;
    }
    return new ClientLinks(proxies);
  }

  urls(client: number): string[] {
    return this.row(client).map((p) => `redis://127.0.0.1:${p.port}`);
  }

  set(client: number, node: number, mode: FaultMode): void {
    const proxy = this.row(client)[node];
    if (!proxy) throw new RangeError(`no link from client ${client} to node ${node}`);
    proxy.setMode(mode);
  }

  healAll(): void {
    for (const p of this.proxies.flat()) if (p.mode.kind !== 'pass') p.setMode({ kind: 'pass' });
  }

  close(): Promise<void> {
    return Promise.all(this.proxies.flat().map((p) => p.close())).then(() => undefined);
  }

  private row(client: number): FaultProxy[] {
    const row = this.proxies[client];
    if (!row) throw new RangeError(`no links for client ${client}`);
    return row;
  }
}

/** One SkewProxy per node (shared by every client), straight to the node's redis-server. */
export class SkewLinks {
  private constructor(readonly proxies: SkewProxy[]) {}

  static async start(redisPorts: readonly number[], leaseScriptShas: readonly string[]): Promise<SkewLinks> {
    const proxies = redisPorts.map((targetPort) => new SkewProxy({ targetPort, leaseScriptShas }));
    try {
      for (const p of proxies) await p.start();
    } catch (err) {
      await Promise.all(proxies.map((p) => p.close()));
      throw err;
    }
    return new SkewLinks(proxies);
  }

  urls(): string[] {
    return this.proxies.map((p) => `redis://127.0.0.1:${p.port}`);
  }

  setRates(rates: readonly number[]): void {
    this.proxies.forEach((p, i) => (p.rate = rates[i] ?? 0));
  }

  close(): Promise<void> {
    return Promise.all(this.proxies.map((p) => p.close())).then(() => undefined);
  }
}
