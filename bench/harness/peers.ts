import { createHash, randomBytes } from 'node:crypto';
import { Redlock as SesameRedlock } from '@sesamecare-oss/redlock';
import { Redis } from 'ioredis';
import NodeRedlock from 'redlock';
import { Redlock } from '@redlock-console/redlock';
import { OUR_PREFIX, MAX_TTL_MS } from './cluster';

/** Something holding a lock: the libraries' own lock objects, or the raw floor's. */
export interface Held {
  release(): Promise<unknown>;
}

export type PeerId = 'ours' | 'ours-fenced' | 'node-redlock' | 'node-redlock-noap' | 'sesame' | 'raw' | 'raw-noap';

export const PEER_LABELS: Record<PeerId, string> = {
  ours: 'ours (fenced: false)',
  'ours-fenced': 'ours (fenced: true)',
  'node-redlock': 'node-redlock + auto-pipelining',
  'node-redlock-noap': 'node-redlock, no auto-pipelining',
  sesame: '@sesamecare-oss/redlock + auto-pipelining',
  raw: 'raw ioredis floor + auto-pipelining',
  'raw-noap': 'raw ioredis floor, no auto-pipelining',
};

/** One lock library (or the floor) on the bench's masters, with its own connections. */
export interface LockClient {
  readonly id: PeerId;
  readonly label: string;
  /** Acquire `resource`; `once`: a single attempt, no retries. */
  acquire(resource: string, ttlMs: number, once?: boolean): Promise<Held>;
  /** One entry per node, in node order (its connection; for ours, the core's node). */
  readonly connections: readonly unknown[];
  /** Commands written to node i and not answered yet, as the client's ioredis queues hold them. */
  queued(i: number): number;
  close(): Promise<void>;
}

export interface PeerSettings {
  /** Retries after a failed attempt (every library's default is 10). */
  retryCount?: number;
}

/**
 * Commands a client holds for its node and has no answer to: written and waiting (`commandQueue`),
 * waiting for a connection (`offlineQueue`), and, with auto-pipelining, waiting in the next
 * automatic pipeline (ioredis runs one automatic pipeline per node at a time, so while one is
 * unanswered the next one grows). ioredis internals, stable across v5.
 */
export function queuedCommands(client: Redis): number {
  const internal = client as unknown as {
    commandQueue?: { length: number };
    offlineQueue?: { length: number };
    _autoPipelines?: Map<string, { length?: number }>;
  };
  let queued = (internal.commandQueue?.length ?? 0) + (internal.offlineQueue?.length ?? 0);
  for (const pipeline of internal._autoPipelines?.values() ?? []) queued += pipeline.length ?? 0;
  return queued;
}

/** Our private node list, for the bench's queue readings only: commands in flight per node. */
interface OurNode {
  pending: number;
}
export function ourNodes(redlock: Redlock): readonly OurNode[] {
  return (redlock as unknown as { nodes: readonly OurNode[] }).nodes;
}

const UNFENCED = Object.freeze({ fenced: false });
const FENCED = Object.freeze({ fenced: true });
const UNFENCED_ONCE = Object.freeze({ fenced: false, retryCount: 0 });
const FENCED_ONCE = Object.freeze({ fenced: true, retryCount: 0 });

/** Our lock core, built from URLs as an application would (its own connections and options). */
export class Ours implements LockClient {
  readonly id: PeerId;
  readonly label: string;
  constructor(
    readonly redlock: Redlock,
    readonly fenced: boolean,
    private readonly owner: boolean,
  ) {
    this.id = fenced ? 'ours-fenced' : 'ours';
    this.label = PEER_LABELS[this.id];
  }

  static create(urls: readonly string[], settings: PeerSettings = {}): [Ours, Ours] {
    const redlock = new Redlock([...urls], { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS, retryCount: settings.retryCount ?? 10 });
    return [new Ours(redlock, false, true), new Ours(redlock, true, false)];
  }

  acquire(resource: string, ttlMs: number, once = false): Promise<Held> {
    const options = this.fenced ? (once ? FENCED_ONCE : FENCED) : once ? UNFENCED_ONCE : UNFENCED;
    return this.redlock.acquire(resource, ttlMs, options);
  }

  get connections(): readonly OurNode[] {
    return ourNodes(this.redlock);
  }

  /** The core's own count of commands sent to node i and not answered (its connections are its own). */
  queued(i: number): number {
    return ourNodes(this.redlock)[i]!.pending;
  }

  async close(): Promise<void> {
    if (this.owner) await this.redlock.quit();
  }
}

function connect(urls: readonly string[], autoPipelining: boolean): Redis[] {
  return urls.map((url) => {
    const client = new Redis(url, { enableAutoPipelining: autoPipelining });
    client.on('error', () => undefined);
    return client;
  });
}

async function closeAll(clients: readonly Redis[]): Promise<void> {
  // A client whose node never answered cannot QUIT: disconnect outright.
  for (const client of clients) client.disconnect();
  await Promise.resolve();
}

/** node-redlock 5.0.0-beta.2 with plain ioredis clients (the library's documented setup). */
export class NodeRedlockPeer implements LockClient {
  readonly label: string;
  readonly connections: Redis[];
  private readonly redlock: NodeRedlock;
  private readonly prefix: string;

  constructor(
    readonly id: 'node-redlock' | 'node-redlock-noap',
    urls: readonly string[],
    settings: PeerSettings = {},
  ) {
    this.label = PEER_LABELS[id];
    this.connections = connect(urls, id === 'node-redlock');
    this.redlock = new NodeRedlock(this.connections, { retryCount: settings.retryCount ?? 10 });
    this.prefix = id === 'node-redlock' ? 'nr:' : 'nn:';
  }

  acquire(resource: string, ttlMs: number, once = false): Promise<Held> {
    return this.redlock.acquire([this.prefix + resource], ttlMs, once ? { retryCount: 0 } : undefined);
  }

  queued(i: number): number {
    return queuedCommands(this.connections[i]!);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}

/** @sesamecare-oss/redlock 1.4.0 (a maintained fork of node-redlock; defineCommand scripts). */
export class SesamePeer implements LockClient {
  readonly id = 'sesame' as const;
  readonly label = PEER_LABELS.sesame;
  readonly connections: Redis[];
  private readonly redlock: SesameRedlock;

  constructor(urls: readonly string[], settings: PeerSettings = {}) {
    this.connections = connect(urls, true);
    this.redlock = new SesameRedlock(this.connections, { retryCount: settings.retryCount ?? 10 });
  }

  acquire(resource: string, ttlMs: number, once = false): Promise<Held> {
    return this.redlock.acquire([`ss:${resource}`], ttlMs, once ? { retryCount: 0 } : undefined);
  }

  queued(i: number): number {
    return queuedCommands(this.connections[i]!);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}

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
    this.quorum = Math.floor(urls.length / 2) + 1;
  }

  async load(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.script('LOAD', RAW_RELEASE)));
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

/** Every peer on the same masters, each with its own connections. */
export async function createPeers(urls: readonly string[], settings: PeerSettings = {}): Promise<Record<PeerId, LockClient>> {
  const [ours, oursFenced] = Ours.create(urls, settings);
  const raw = new RawFloor('raw', urls);
  const rawNoAp = new RawFloor('raw-noap', urls);
  const peers: Record<PeerId, LockClient> = {
    ours: ours,
    'ours-fenced': oursFenced,
    'node-redlock': new NodeRedlockPeer('node-redlock', urls, settings),
    'node-redlock-noap': new NodeRedlockPeer('node-redlock-noap', urls, settings),
    sesame: new SesamePeer(urls, settings),
    raw: raw,
    'raw-noap': rawNoAp,
  };
  await raw.load();
  await rawNoAp.load();
  // One acquire + release each: connections up, scripts cached.
  for (const peer of Object.values(peers)) {
    const held = await peer.acquire(`warm-${randomBytes(4).toString('hex')}`, 5_000);
    await held.release();
  }
  return peers;
}

export async function closePeers(peers: Record<PeerId, LockClient>): Promise<void> {
  for (const peer of Object.values(peers)) await peer.close();
}
