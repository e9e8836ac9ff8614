import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { lockKeysOf, quorumSize, Redlock, semaphoreSlotKey, tokenOf, type Lock } from '@redlock-console/redlock';
import { RedlockMultiSemaphore, RedlockSemaphore } from 'redis-semaphore';
import { MAX_TTL_MS, OUR_PREFIX } from './cluster';
import { closeAll, connect } from './peer-client';

/**
 * The semaphore workload's peers (bench/workloads/semaphore.ts): our fenced slot semaphore and
 * redis-semaphore 5.8's `RedlockSemaphore` / `RedlockMultiSemaphore` (a sorted set of holders per
 * node, a holder admitted where the set is below `limit`, held at a majority of admissions), each
 * with its own connections to the same masters.
 */
export type SemPeerId = 'ours' | 'ours-fenced' | 'rs' | 'rs-noap' | 'mutex-fenced';

export const SEM_LABELS: Record<SemPeerId, string> = {
  ours: 'ours acquireSemaphore (fenced: false)',
  'ours-fenced': 'ours acquireSemaphore (fenced: true)',
  rs: 'redis-semaphore RedlockSemaphore / RedlockMultiSemaphore + auto-pipelining',
  'rs-noap': 'redis-semaphore RedlockSemaphore / RedlockMultiSemaphore, no auto-pipelining',
  'mutex-fenced': 'diagnostic: ours acquire() (fenced: true), a mutex per worker, one per permit',
};

/** Permits held, and how to read on a node whether it holds them there. */
export interface SemHeld {
  release(): Promise<unknown>;
  /** On one master (a connection of the bench's own): does this holder hold every permit there, live? */
  liveOn(direct: Redis): Promise<boolean>;
  /** On one master: is anything of this holder left there? */
  leftOn(direct: Redis): Promise<boolean>;
}

export interface SemClient {
  readonly id: SemPeerId;
  /** Each worker needs a resource of its own (a mutex is not shared as a semaphore's permits are). */
  readonly perWorker?: boolean;
  /** Take `permits` of the `limit` permits of semaphore `resource` for `ttlMs`. */
  acquire(resource: string, limit: number, permits: number, ttlMs: number): Promise<SemHeld>;
  close(): Promise<void>;
}

/** Ours: one Redlock (as an application has one), fenced or not per call. */
class OurSemaphore implements SemClient {
  private readonly options: { fenced: boolean; permits: number }[];
  constructor(
    readonly id: 'ours' | 'ours-fenced',
    private readonly redlock: Redlock,
    private readonly owner: boolean,
  ) {
    // One frozen options object per permit count, as an application would keep its own.
    this.options = Array.from({ length: 9 }, (_, k) => Object.freeze({ fenced: id === 'ours-fenced', permits: Math.max(1, k) }));
  }

  async acquire(resource: string, limit: number, permits: number, ttlMs: number): Promise<SemHeld> {
    const permit = await this.redlock.acquireSemaphore(resource, limit, ttlMs, this.options[permits]!);
    return new KeysHeld(
      permit,
      permit.slots.map((slot) => semaphoreSlotKey(OUR_PREFIX, resource, slot)),
    );
  }

  async close(): Promise<void> {
    if (this.owner) await this.redlock.quit();
  }
}

/** Our permit or lock: its keys hold its token, live. */
class KeysHeld implements SemHeld {
  constructor(
    private readonly lock: Lock,
    private readonly keys: readonly string[],
  ) {}
  release(): Promise<unknown> {
    return this.lock.release();
  }
  async liveOn(direct: Redis): Promise<boolean> {
    for (const key of this.keys) {
      const [value, ttl] = await Promise.all([direct.get(key), direct.pttl(key)]);
      if (value === null || tokenOf(value) !== this.lock.token || ttl <= 0) return false;
    }
    return true;
  }
  async leftOn(direct: Redis): Promise<boolean> {
    for (const key of this.keys) if ((await direct.exists(key)) > 0) return true;
    return false;
  }
}

/**
 * A diagnostic beside the semaphores: our fenced mutex, `permits` resources in one acquire (as a
 * permit of k slots is one multi-resource grant of k slot keys). The semaphore's own cost is what
 * it spends beyond this: choosing slots, its claims and its keys (semaphore.ts).
 */
class OurMutex implements SemClient {
  readonly id = 'mutex-fenced' as const;
  readonly perWorker = true;
  private static readonly FENCED = Object.freeze({ fenced: true });
  constructor(private readonly redlock: Redlock) {}

  async acquire(resource: string, _limit: number, permits: number, ttlMs: number): Promise<SemHeld> {
    const names = permits === 1 ? resource : Array.from({ length: permits }, (_, i) => `${resource}:${i}`);
    const lock = await this.redlock.acquire(names, ttlMs, OurMutex.FENCED);
    return new KeysHeld(lock, lockKeysOf(OUR_PREFIX, lock.resources));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * redis-semaphore: one semaphore object per acquisition (each carries its own identifier, as its
 * README does), `RedlockMultiSemaphore` for more than one permit. Auto-refresh off (no other peer
 * extends in the background); its own retry interval (10 ms) and attempt limit (none) by default,
 * bounded by a 10 s acquire timeout.
 */
class TheirSemaphore implements SemClient {
  readonly connections: Redis[];
  constructor(
    readonly id: 'rs' | 'rs-noap',
    urls: readonly string[],
  ) {
    this.connections = connect(urls, id === 'rs');
  }

  async acquire(resource: string, limit: number, permits: number, ttlMs: number): Promise<SemHeld> {
    const options = { lockTimeout: ttlMs, acquireTimeout: 10_000, refreshInterval: 0 };
    const key = `${this.id}:${resource}`;
    const sem =
      permits === 1
        ? new RedlockSemaphore(this.connections, key, limit, options)
        : new RedlockMultiSemaphore(this.connections, key, limit, permits, options);
    await sem.acquire();
    return new TheirHeld(sem, `semaphore:${key}`, permits, ttlMs);
  }

  close(): Promise<void> {
    return closeAll(this.connections);
  }
}

class TheirHeld implements SemHeld {
  constructor(
    private readonly sem: RedlockSemaphore,
    private readonly key: string,
    private readonly permits: number,
    private readonly ttlMs: number,
  ) {}
  release(): Promise<unknown> {
    return this.sem.release();
  }
  /** Its members: the identifier for one permit, `<identifier>_<i>` for several (its Lua scripts). */
  private members(): string[] {
    const id = this.sem.identifier;
    return this.permits === 1 ? [id] : Array.from({ length: this.permits }, (_, i) => `${id}_${i}`);
  }
  async liveOn(direct: Redis): Promise<boolean> {
    // A member counts while its score (the node's admission time, from the client's clock) is within the lock timeout.
    const now = Date.now();
    for (const member of this.members()) {
      const score = await direct.zscore(this.key, member);
      if (score === null || Number(score) <= now - this.ttlMs) return false;
    }
    return true;
  }
  async leftOn(direct: Redis): Promise<boolean> {
    for (const member of this.members()) if ((await direct.zscore(this.key, member)) !== null) return true;
    return false;
  }
}

/** Every semaphore peer on the same masters, each with its own connections. */
export function createSemaphorePeers(urls: readonly string[]): Record<SemPeerId, SemClient> {
  const redlock = new Redlock([...urls], { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS });
  return {
    ours: new OurSemaphore('ours', redlock, true),
    'ours-fenced': new OurSemaphore('ours-fenced', redlock, false),
    rs: new TheirSemaphore('rs', urls),
    'rs-noap': new TheirSemaphore('rs-noap', urls),
    'mutex-fenced': new OurMutex(redlock),
  };
}

/**
 * Every peer must really hold what it says: for each permit count, while held, every permit live
 * on at least a quorum of the masters (read with connections of our own), and after release
 * nothing of it left on any. A peer that fails this is not measured: the workload stops with the
 * reason. (It checks that each peer holds a quorum, not that a quorum of per-node counts excludes:
 * see the workload's notes and docs/semaphores.md for why redis-semaphore's does not for limit ≥ 2.)
 */
export async function checkSemaphoresHold(
  peers: Record<SemPeerId, SemClient>,
  urls: readonly string[],
  shapes: readonly { limit: number; permits: number }[],
): Promise<void> {
  const direct = urls.map((url) => new Redis(url));
  try {
    for (const [id, peer] of Object.entries(peers)) {
      for (const { limit, permits } of shapes) {
        const resource = `sem-hold-check-${randomBytes(4).toString('hex')}`;
        const held = await peer.acquire(resource, limit, permits, 10_000);
        const live = (await Promise.all(direct.map((c) => held.liveOn(c)))).filter(Boolean).length;
        await held.release();
        // A release may answer at a quorum of nodes: the rest land a moment later.
        let left = urls.length;
        for (const deadline = performance.now() + 1_000; left > 0 && performance.now() < deadline;) {
          left = (await Promise.all(direct.map((c) => held.leftOn(c)))).filter(Boolean).length;
          // poll: the release's last nodes, within a second.
          if (left > 0) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (live < quorumSize(urls.length) || left !== 0) {
          throw new Error(
            `bench: semaphore peer ${id} (limit ${limit}, ${permits} permits) held on ${live} of ${urls.length} masters ` +
              `and still had something on ${left} 1 s after release`,
          );
        }
      }
    }
  } finally {
    for (const c of direct) c.disconnect();
  }
}

export async function closeSemaphorePeers(peers: Record<SemPeerId, SemClient>): Promise<void> {
  for (const peer of Object.values(peers)) await peer.close();
}
