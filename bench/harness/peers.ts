import { randomBytes } from 'node:crypto';
import { Redlock as SesameRedlock } from '@sesamecare-oss/redlock';
import { Redis } from 'ioredis';
import NodeRedlock from 'redlock';
import { lockKey, quorumSize, Redlock } from '@redlock-console/redlock';
import { RedlockMutex } from 'redis-semaphore';
import { createRedlock, IoredisAdapter, type Lock as UniversalLock } from 'redlock-universal';
import { OUR_PREFIX, MAX_TTL_MS } from './cluster';
import { closeAll, connect, PEER_LABELS, queuedCommands, type Held, type LockClient, type PeerId, type PeerSettings } from './peer-client';
import { RawFloor } from './raw-floor';

// The peers' shared vocabulary lives in peer-client.ts (the raw floor, raw-floor.ts, needs it too).
export { PEER_LABELS, type Held, type LockClient, type PeerId } from './peer-client';

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

  keyOf(resource: string): string {
    return lockKey(OUR_PREFIX, resource);
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

  keyOf(resource: string): string {
    return this.prefix + resource;
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

  keyOf(resource: string): string {
    return `ss:${resource}`;
  }

  queued(i: number): number {
    return queuedCommands(this.connections[i]!);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}

/**
 * redis-semaphore 5.8 `RedlockMutex`: SET NX PX on every node, a quorum of OKs, compare-and-delete
 * by script. One mutex object per acquisition, as its README does (each object carries its own
 * identifier: sharing one between concurrent holders would share the identity). Auto-refresh off
 * (refreshInterval 0): no other peer here extends in the background.
 */
export class SemaphorePeer implements LockClient {
  readonly label: string;
  readonly connections: Redis[];
  private readonly retries: number;

  constructor(
    readonly id: 'semaphore' | 'semaphore-noap',
    urls: readonly string[],
    settings: PeerSettings = {},
  ) {
    this.label = PEER_LABELS[id];
    this.connections = connect(urls, id === 'semaphore');
    this.retries = settings.retryCount ?? 10;
  }

  keyOf(resource: string): string {
    return `mutex:rs:${resource}`;
  }

  async acquire(resource: string, ttlMs: number, once = false): Promise<Held> {
    const mutex = new RedlockMutex(this.connections, `rs:${resource}`, {
      lockTimeout: ttlMs,
      acquireTimeout: 60_000,
      acquireAttemptsLimit: once ? 1 : this.retries + 1,
      retryInterval: 200,
      refreshInterval: 0,
    });
    await mutex.acquire();
    return { release: () => mutex.release() };
  }

  queued(i: number): number {
    return queuedCommands(this.connections[i]!);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}

/**
 * redlock-universal 0.8.5 `createRedlock` over its ioredis adapters: one lock object per resource,
 * made once and reused (its acquire returns a handle that release takes), as its README does.
 */
export class UniversalPeer implements LockClient {
  readonly label: string;
  readonly connections: Redis[];
  private readonly adapters: IoredisAdapter[];
  private readonly locks = new Map<string, { lock: UniversalLock; once: UniversalLock }>();
  private readonly retries: number;

  constructor(
    readonly id: 'universal' | 'universal-noap',
    urls: readonly string[],
    settings: PeerSettings = {},
  ) {
    this.label = PEER_LABELS[id];
    this.connections = connect(urls, id === 'universal');
    this.adapters = this.connections.map((c) => new IoredisAdapter(c));
    this.retries = settings.retryCount ?? 10;
  }

  keyOf(resource: string): string {
    return `ru:${resource}`;
  }

  async acquire(resource: string, ttlMs: number, once = false): Promise<Held> {
    const key = `${resource}\u0000${ttlMs}`;
    let entry = this.locks.get(key);
    if (!entry) {
      const make = (retryAttempts: number) =>
        createRedlock({ adapters: this.adapters, key: this.keyOf(resource), ttl: ttlMs, retryAttempts, retryDelay: 200 });
      entry = { lock: make(this.retries), once: make(0) };
      this.locks.set(key, entry);
    }
    const lock = once ? entry.once : entry.lock;
    const handle = await lock.acquire();
    return { release: () => lock.release(handle) };
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
    semaphore: new SemaphorePeer('semaphore', urls, settings),
    'semaphore-noap': new SemaphorePeer('semaphore-noap', urls, settings),
    universal: new UniversalPeer('universal', urls, settings),
    'universal-noap': new UniversalPeer('universal-noap', urls, settings),
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
  await checkPeersHold(peers, urls);
  return peers;
}

/**
 * Every peer must really lock: while held, its key is live on at least a quorum of the masters
 * (read with connections of our own), and after release on none. A library that fails this is
 * not measured (the bench stops with the reason): a fast lock that does not exclude is no peer.
 */
async function checkPeersHold(peers: Record<PeerId, LockClient>, urls: readonly string[]): Promise<void> {
  const direct = urls.map((url) => new Redis(url, { lazyConnect: false }));
  try {
    for (const [id, peer] of Object.entries(peers)) {
      const resource = `hold-check-${randomBytes(4).toString('hex')}`;
      const key = peer.keyOf(resource);
      const held = await peer.acquire(resource, 10_000);
      const live = (await Promise.all(direct.map((c) => c.pttl(key)))).filter((ttl) => ttl > 0).length;
      await held.release();
      // A library may resolve its release at a quorum of deletions: the rest land a moment later.
      let left = urls.length;
      for (const deadline = performance.now() + 1_000; left > 0 && performance.now() < deadline;) {
        left = (await Promise.all(direct.map((c) => c.exists(key)))).reduce((a, b) => a + b, 0);
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (live < quorumSize(urls.length) || left !== 0) {
        throw new Error(`bench: peer ${id} held ${key} on ${live} of ${urls.length} masters and still had it on ${left} 1 s after release`);
      }
    }
  } finally {
    for (const c of direct) c.disconnect();
  }
}

export async function closePeers(peers: Record<PeerId, LockClient>): Promise<void> {
  for (const peer of Object.values(peers)) await peer.close();
}
