import { epochKey, lockKey, semaphoreSlotKey, semaphoreSlotName } from '@redlock-console/redlock';
import { laneState, type ScenarioCluster } from './cluster';
import type { RunRecord } from './record';
import type { ScenarioScript } from './script';

const SAMPLE_EVERY_MS = 120;
const STATES_EVERY_MS = 300;

/**
 * The keys a run's resources live in, by the name their readings carry: a lock's key by its name,
 * a semaphore's slot keys by the slot's name (`sem:<resource>:<slot>`, keys.ts), so each slot is
 * its own row of keys on the timeline.
 */
export function keysToRead(prefix: string, resources: ScenarioScript['resources']): Map<string, string> {
  const keys = new Map<string, string>();
  for (const r of resources) {
    if (r.limit === undefined) keys.set(r.name, lockKey(prefix, r.name));
    else for (let i = 0; i < r.limit; i++) keys.set(semaphoreSlotName(r.name, i), semaphoreSlotKey(prefix, r.name, i));
  }
  return keys;
}

/**
 * Reads every node about every 120 ms (the lock key of each resource or its slots' keys, TTL and holder, and the
 * quarantine the run's sentinel records, straight from the redis-server), and the supervisor's view of each node every 300 ms, into the record.
 * One read per node in flight at a time, so a paused or slow node never piles reads up.
 */
export class Sampler {
  private timers: NodeJS.Timeout[] = [];
  private frozen = false;
  private readonly inFlight = new Set<number>();
  /** Key by reading name (keysToRead). */
  private readonly keys: Map<string, string>;

  constructor(
    private readonly cluster: ScenarioCluster,
    private readonly record: RunRecord,
    private readonly prefix: string,
    resources: ScenarioScript['resources'],
    private readonly now: () => number,
  ) {
    this.keys = keysToRead(prefix, resources);
  }

  start(): void {
    this.timers.push(setInterval(() => this.sampleKeys(), SAMPLE_EVERY_MS));
    this.timers.push(setInterval(() => void this.refreshStates(), STATES_EVERY_MS));
  }

  /** Stop, after one last reading of every node (so the final picture shows what the last steps did). */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const reads = Promise.all(this.cluster.addresses.map((a) => this.read(a.id)));
    const samples = await Promise.race([reads, new Promise<null>((r) => setTimeout(() => r(null), 1_000))]);
    for (const s of samples ?? []) this.record.sample(s);
    await this.refreshStates();
    this.frozen = true;
  }

  /**
   * Read every node now and record it (also while a periodic read is in flight): a step calls it
   * just before a crash, so that a key granted moments earlier is on the timeline before it goes.
   */
  async sampleAll(): Promise<void> {
    if (this.frozen) return;
    const samples = await Promise.all(this.cluster.addresses.map((a) => this.read(a.id)));
    if (!this.frozen) for (const s of samples) this.record.sample(s);
  }

  /** Record the supervisor's view of every node now (also right after a node action). */
  async refreshStates(): Promise<void> {
    if (this.frozen) return;
    try {
      const statuses = await this.cluster.statuses();
      const t = this.now();
      if (this.frozen) return;
      for (const s of statuses) {
        const { state, detail } = laneState(s);
        this.record.state(t, s.id, state, detail);
      }
    } catch {
      // the supervisor did not answer this time; the next poll will
    }
  }

  private sampleKeys(): void {
    for (const a of this.cluster.addresses) {
      if (this.inFlight.has(a.id)) continue;
      this.inFlight.add(a.id);
      void this.read(a.id).then((s) => {
        this.inFlight.delete(a.id);
        if (!this.frozen && this.timers.length > 0) this.record.sample(s);
      });
    }
  }

  private read(node: number) {
    return this.cluster.read(node, this.now, (r) => this.keys.get(r)!, [...this.keys.keys()], epochKey(this.prefix));
  }
}
