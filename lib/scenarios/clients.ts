import { Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_SETTINGS, Redlock, type OperationEvent } from '@redlock-console/redlock';
import type { ClientSpec } from './script';
import { atNode } from '../node-number';

/** Where one node can be reached: through its fault proxy (what every client uses) or directly. */
export interface NodeAddress {
  id: number;
  label: string;
  proxyUrl: string;
  directUrl: string;
}

/**
 * Connections of a scenario client. Like the lock core's own (no offline queue, no resending: a
 * node that is down votes `error` at once), but reconnecting every 50 ms so a restarted node is
 * back in the demo quickly, and owned here so the engine can wait until they are ready.
 */
const CONNECTION_OPTIONS: Readonly<RedisOptions> = Object.freeze({
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 1_000,
  retryStrategy: () => 50,
});

/**
 * Per-round node deadline of the scenario clients. The lock core's default is 100 ms; the demo
 * cluster shares a small, busy machine with the console and the browser, and a restarted node's
 * first answers are slow, so the scenarios allow 250 ms (still far below every TTL they use).
 */
export const DEMO_NODE_TIMEOUT_MS = 250;

/** One scenario client: its own Redlock instance over its own connections. */
export class ScenarioClient {
  readonly name: string;
  readonly spec: ClientSpec;
  readonly redlock: Redlock;
  /** Simulated stop-the-world pauses of this client (run time, ms); `to` null while paused. */
  readonly pauses: Array<{ from: number; to: number | null }> = [];
  /** The outcome event of this client's last acquire (it runs one acquire at a time). */
  lastAcquire: OperationEvent | null = null;
  /** This client's connections, by node id (only the nodes it locks on). */
  private readonly conns: Map<number, Redis>;

  constructor(spec: ClientSpec, nodes: readonly NodeAddress[], settings: { keyPrefix: string; maxTtlMs: number }) {
    this.name = spec.name;
    this.spec = spec;
    const mine = spec.nodes ? nodes.filter((n) => spec.nodes!.includes(n.id as never)) : nodes;
    this.conns = new Map(
      mine.map((n) => {
        const near = spec.near?.includes(n.id as never) ?? false;
        const client = new Redis(near ? n.directUrl : n.proxyUrl, { ...CONNECTION_OPTIONS });
        client.on('error', () => undefined); // surfaced as `error` votes
        return [n.id, client] as const;
      }),
    );
    this.redlock = new Redlock([...this.conns.values()], {
      keyPrefix: settings.keyPrefix,
      maxTtlMs: settings.maxTtlMs,
      quarantine: spec.quarantine ?? true,
      nodeChecks: spec.nodeChecks ?? true,
      driftFactor: spec.driftFactor ?? DEFAULT_SETTINGS.driftFactor,
      nodeTimeoutMs: spec.nodeTimeoutMs ?? DEMO_NODE_TIMEOUT_MS,
      retryCount: 0,
      subscriberLingerMs: 200,
      // Fences from the registers (the fence round), as the scenarios teach them: a fence proposed
      // from the nodes' clock (fence-ahead.ts) can stay above a register that went back, by the
      // clock's luck, and hide what scenarios 9 and 12 show.
      fenceAhead: false,
    });
    this.redlock.on('acquire', (event) => {
      this.lastAcquire = event;
    });
  }

  /** The sandbox node behind the lock core's node number `n` (its place in this client's node list, from 1). */
  nodeId(n: number): number {
    return atNode([...this.conns.keys()], n) ?? n;
  }

  get paused(): boolean {
    return this.pauses.some((p) => p.to === null);
  }

  pause(t: number): void {
    if (!this.paused) this.pauses.push({ from: t, to: null });
  }

  wake(t: number): void {
    for (const p of this.pauses) if (p.to === null) p.to = t;
  }

  /** Was this client paused at run time `t`? */
  pausedAt(t: number): boolean {
    return this.pauses.some((p) => p.from <= t && (p.to === null || t < p.to));
  }

  /**
   * Resolve once this client's connections to `nodes` (1-based) are ready, or reject after
   * `timeoutMs`. Nodes this client does not lock on are not waited for.
   */
  async ready(nodes: readonly number[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const waiting = nodes.filter((id) => this.conns.has(id) && this.conns.get(id)!.status !== 'ready');
      if (waiting.length === 0) return;
      if (performance.now() > deadline)
        throw new Error(`client ${this.name} could not reach node ${waiting.join(', ')} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async close(): Promise<void> {
    await this.redlock.quit().catch(() => undefined);
    for (const c of this.conns.values()) c.disconnect();
  }
}
