import { epochKey, lockKey } from '@redlock-console/redlock';
import { laneState, type ScenarioCluster } from './cluster';
import type { RunRecord } from './record';

const SAMPLE_EVERY_MS = 120;
const STATES_EVERY_MS = 300;

/**
 * Reads every node about every 120 ms (the lock key of each resource, its TTL and holder, and the
 * quarantine the run's sentinel records, straight from the redis-server), and the supervisor's view of each node every 300 ms, into the record.
 * One read per node in flight at a time, so a paused or slow node never piles reads up.
 */
export class Sampler {
  private timers: NodeJS.Timeout[] = [];
  private frozen = false;
  private readonly inFlight = new Set<number>();

  constructor(
    private readonly cluster: ScenarioCluster,
    private readonly record: RunRecord,
    private readonly prefix: string,
    private readonly resources: readonly string[],
    private readonly now: () => number,
  ) {}

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
    return this.cluster.read(node, this.now, (r) => lockKey(this.prefix, r), this.resources, epochKey(this.prefix));
  }
}
