import { quorumSize } from '@redlock-console/redlock';
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeAll, connect, PEER_LABELS, queuedCommands, type Held, type LockClient } from './peer-client';

const RAW_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const RAW_RELEASE_SHA = createHash('sha1').update(RAW_RELEASE).digest('hex');

/**
 * The floor: what any Redlock costs at least with ioredis. SET key token NX PX ttl on every node
 * in parallel, granted at a quorum of OKs; release = the compare-and-delete script (EVALSHA) on
 * every node, waiting for all (as our release does). No validity arithmetic, no retries, no
 * metadata, no quarantine check.
 */
export class RawFloor implements LockClient {
  readonly label: string;
  readonly connections: Redis[];
  private readonly quorum: number;

  constructor(
    readonly id: 'raw' | 'raw-noap',
    urls: readonly string[],
  ) {
    this.label = PEER_LABELS[id];
    this.connections = connect(urls, id === 'raw');
    this.quorum = quorumSize(urls.length);
  }

  async load(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.script('LOAD', RAW_RELEASE)));
  }

  keyOf(resource: string): string {
    return `raw:${resource}`;
  }

  acquire(resource: string, ttlMs: number): Promise<Held> {
    const key = `raw:${resource}`;
    const token = randomBytes(20).toString('base64url');
    const clients = this.connections;
    const n = clients.length;
    const quorum = this.quorum;
    return new Promise<Held>((resolve, reject) => {
      let granted = 0;
      let refused = 0;
      const release = () => Promise.all(clients.map((c) => c.evalsha(RAW_RELEASE_SHA, 1, key, token)));
      const held: Held = { release };
      const vote = (ok: boolean) => {
        if (ok) {
          if (++granted === quorum) resolve(held);
        } else if (++refused === n - quorum + 1) {
          release().catch(() => undefined);
          reject(new Error(`raw floor: ${key} refused on ${refused} nodes`));
        }
      };
      for (const client of clients)
        client.set(key, token, 'PX', ttlMs, 'NX').then(
          (r) => vote(r === 'OK'),
          () => vote(false),
        );
    });
  }

  queued(i: number): number {
    return queuedCommands(this.connections[i]!);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}
