import { Redis } from 'ioredis';
import type { NodeAction } from '../api/node-actions';
import type { Persistence } from '../cluster/persistence';
import type { NodeStatus } from '../cluster/supervisor';
import type { NodeLaneState } from '../api/scenarios';
import { splitLockValue } from '../inspect/meta';
import { luaScript, readLua, runLua } from '../inspect/script';
import { EPOCH_FIELDS } from '@redlock-console/redlock';
import { ALL_SCRIPTS, PROBE_SCRIPT } from '@redlock-console/redlock/internals';
import { backUp, dropBackup, restoreInPlace, type RestoreOutcome } from './backup';
import type { NodeAddress } from './clients';
import { runIdOf, SandboxOverlapError, sharedEndpoints, type MainMasters } from './separation';
import type { KeyReading, NodeSample } from './timeline';
import { atNode } from '../node-number';

/** What the engine needs from the supervisor (the console's ControlClient fits). */
export interface ClusterControl {
  nodes(): Promise<NodeStatus[]>;
  act(id: number, action: NodeAction): Promise<NodeStatus>;
}

/**
 * Shorten a key's TTL on one node if it still holds `token` (the clock-drift simulation). The value
 * is `<token> <metadata JSON>` (see packages/redlock/src/value.ts), so the key holds the token when its
 * value is the token or starts with the token and a space, as the lock core's scripts decide; the
 * value is left as it is, only the TTL changes.
 * KEYS[1] lock key   ARGV[1] token, ARGV[2] percent faster
 * Reply: {PTTL before, PTTL after}; {-1, -1} when the key does not hold the token
 */
const DRIFT_SCRIPT = luaScript(`
local value = redis.call('GET', KEYS[1])
local head = ARGV[1] .. ' '
if not (value == ARGV[1] or (value and string.sub(value, 1, #head) == head)) then return {-1, -1} end
local left = redis.call('PTTL', KEYS[1])
if left <= 0 then return {left, left} end
local shorter = math.max(1, math.floor(left * 100 / (100 + tonumber(ARGV[2]))))
redis.call('PEXPIRE', KEYS[1], shorter)
return {left, shorter}`);

/**
 * Read lock keys on one node at one instant: per key its value (`<token> <metadata JSON>`, or a
 * bare token; split by the caller) and PTTL; with a sentinel key, also the quarantine it records
 * and the node's clock, to tell how long that quarantine still runs.
 * KEYS the lock keys, then the epoch sentinel when ARGV[1] is '1'
 * ARGV[1] '1': the last key is the sentinel; ARGV[2], ARGV[3] its quarantineUntil and cause fields
 * Reply: 2 items per lock key: value | nil, PTTL; then, with the sentinel: quarantineUntil | nil,
 *        cause | nil, the node's clock (ms)
 */
const READ_SCRIPT = luaScript(`
local out = {}
local n = #KEYS
if ARGV[1] == '1' then n = n - 1 end
for i = 1, n do
  out[2 * i - 1] = redis.call('GET', KEYS[i])
  out[2 * i] = redis.call('PTTL', KEYS[i])
end
if ARGV[1] == '1' then
  local e = redis.call('HMGET', KEYS[n + 1], ARGV[2], ARGV[3], ARGV[4])
  local t = redis.call('TIME')
  out[2 * n + 1] = e[1]
  out[2 * n + 2] = e[2]
  out[2 * n + 3] = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  out[2 * n + 4] = e[3]
end
return out`);

/** How a node's lane reads, from the supervisor's view of its process and proxy. */
export function laneState(status: NodeStatus): { state: NodeLaneState; detail: string } {
  switch (status.state) {
    case 'down':
      return {
        state: 'down',
        detail: status.restartAt ? `restarts at ${new Date(status.restartAt).toISOString()}` : `persistence ${status.persistence}`,
      };
    case 'starting':
    case 'stopping':
    case 'paused':
      return { state: status.state, detail: '' };
    default:
      break;
  }
  const fault = status.fault;
  if (!fault || fault.kind === 'pass') return { state: 'up', detail: status.persistence };
  if (fault.kind === 'blackhole') return { state: 'partitioned', detail: 'cut off from the clients' };
  if (fault.kind === 'reset') return { state: 'reset', detail: 'connections reset' };
  return { state: 'slow', detail: `+${fault.upMs + fault.downMs} ms round trip` };
}

/**
 * The sandbox cluster as a run sees it: node actions through the supervisor, and one direct
 * connection per redis-server (bypassing the fault proxies) to read what each node really holds.
 */
export class ScenarioCluster {
  private constructor(
    private readonly control: ClusterControl,
    readonly initial: readonly NodeStatus[],
    readonly addresses: readonly NodeAddress[],
    private readonly direct: readonly Redis[],
  ) {}

  /**
   * Open the cluster `control` runs. With `main` (the masters that hold applications' locks), refuse
   * (SandboxOverlapError, before any command a run sends) when a node is one of them: reached at one
   * of their addresses, or the same redis-server process (run_id) behind another; a node that cannot
   * be told apart (it does not answer INFO) is refused too.
   */
  static async open(control: ClusterControl, main?: MainMasters): Promise<ScenarioCluster> {
    const initial = (await control.nodes()).slice().sort((a, b) => a.id - b.id);
    const addresses = initial.map((n) => ({
      id: n.id,
      label: `${n.host}:${n.port}`,
      proxyUrl: n.url,
      directUrl: n.directUrl,
    }));
    const direct = addresses.map((a) => {
      const client = new Redis(a.directUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 500,
        commandTimeout: 400,
        retryStrategy: () => 100,
      });
      client.on('error', () => undefined);
      return client;
    });
    const cluster = new ScenarioCluster(control, initial, addresses, direct);
    if (main) {
      try {
        await cluster.assertApartFrom(main);
      } catch (err) {
        cluster.close();
        throw err;
      }
    }
    return cluster;
  }

  private async assertApartFrom(main: MainMasters): Promise<void> {
    const findings = sharedEndpoints(
      this.addresses.map((a) => ({ id: a.id, urls: [a.proxyUrl, a.directUrl] })),
      main.urls,
    );
    if (findings.length === 0) {
      await this.whenReadable(5_000).catch(() => undefined);
      const [mine, theirs] = await Promise.all([Promise.all(this.direct.map(runIdOf)), main.runIds()]);
      const taken = new Set(theirs);
      mine.forEach((id, i) => {
        if (id === null) findings.push(`sandbox node ${i + 1} does not answer, so it cannot be told apart from the main masters`);
        else if (taken.has(id)) findings.push(`sandbox node ${i + 1} is the same redis-server process as a main master (run_id ${id})`);
      });
    }
    if (findings.length > 0) throw new SandboxOverlapError(findings);
  }

  get size(): number {
    return this.initial.length;
  }

  /** The direct connection to node `id` (bypasses its fault proxy). */
  directClient(id: number): Redis {
    return atNode(this.direct, id)!;
  }

  statuses(): Promise<NodeStatus[]> {
    return this.control.nodes();
  }

  async act(ids: readonly number[], action: NodeAction): Promise<void> {
    await Promise.all(ids.map((id) => this.control.act(id, action)));
  }

  /**
   * Read the lock key of every resource on one node, directly: the token of its value and the
   * holder's client name from the metadata after it ('?' without metadata). With `epochKey` (the
   * run's sentinel), also the quarantine the node records, its end in run time.
   */
  async read(
    node: number,
    t: () => number,
    lockKey: (r: string) => string,
    resources: readonly string[],
    epochKey?: string,
  ): Promise<NodeSample> {
    const client = atNode(this.direct, node)!;
    const sent = t();
    try {
      const keys = resources.map(lockKey);
      const args = epochKey === undefined ? ['0'] : ['1', EPOCH_FIELDS.quarantineUntil, EPOCH_FIELDS.cause, EPOCH_FIELDS.fence];
      if (epochKey !== undefined) keys.push(epochKey);
      const reply = keys.length > 0 ? await readLua(client, READ_SCRIPT, keys, args) : [];
      const at = Math.round((sent + t()) / 2);
      if (!Array.isArray(reply)) return { t: at, node, ok: false, keys: [] };
      const tail = reply.slice(resources.length * 2);
      const quarantine = epochKey === undefined ? undefined : quarantineOf(tail, at);
      // The node's fence register for the run's prefix (the max of every fence issued through it).
      const fence = epochKey === undefined ? undefined : typeof tail[3] === 'string' && tail[3] !== '' ? Number(tail[3]) : null;
      const readings: KeyReading[] = [];
      resources.forEach((resource, i) => {
        const value: unknown = reply[i * 2];
        if (typeof value !== 'string') return;
        const pttl = Number(reply[i * 2 + 1]);
        if (pttl === -2) return;
        const { token, meta } = splitLockValue(value);
        readings.push({ resource, token, pttl, client: meta?.client ?? '?' });
      });
      return {
        t: at,
        node,
        ok: true,
        keys: readings,
        ...(quarantine === undefined ? {} : { quarantine }),
        ...(fence === undefined || (fence !== null && !Number.isFinite(fence)) ? {} : { fence }),
      };
    } catch {
      return { t: t(), node, ok: false, keys: [] };
    }
  }

  /** Nodes whose spare database got a backup of the run's keys (deleted at the end, if never restored). */
  private readonly backups = new Set<number>();

  /** Back up the run's keys on `node` into its spare database (backup.ts); the number of keys. */
  async backUp(node: number, prefix: string): Promise<number> {
    this.backups.add(node);
    return backUp(atNode(this.direct, node)!, prefix);
  }

  /** Restore `node` in place from its backup (SWAPDB, backup.ts). */
  restoreBackup(node: number, prefix: string): Promise<RestoreOutcome> {
    return restoreInPlace(atNode(this.direct, node)!, prefix);
  }

  /** The drift step: divide the key's remaining TTL on `node` by (1 + fast%) if it still holds `token`. */
  async shortenTtl(node: number, lockKey: string, token: string, fastPercent: number): Promise<{ before: number; after: number }> {
    const reply = await runLua(atNode(this.direct, node)!, DRIFT_SCRIPT, [lockKey], [token, String(fastPercent)]);
    const [before, after] = reply as [number, number];
    return { before: Number(before), after: Number(after) };
  }

  /**
   * Load the lock core's scripts on freshly started nodes, so the clients' first EVALSHA there does
   * not pay a NOSCRIPT round trip (on a loaded demo machine that can cost a vote its deadline).
   * Never the probe: only a check may load it (scripts/probe.lua), so that a fast probe that
   * succeeds proves the node's process was checked. Loading it here would let a node restarted from
   * an old snapshot answer a fast probe with the old sentinel, and its restart would go unnoticed.
   */
  async warmUp(ids: readonly number[]): Promise<void> {
    await this.whenReadable(5_000).catch(() => undefined);
    const scripts = ALL_SCRIPTS.filter((s) => s !== PROBE_SCRIPT);
    await Promise.all(
      ids.map((id) => Promise.all(scripts.map((s) => atNode(this.direct, id)!.script('LOAD', s.source))).catch(() => undefined)),
    );
  }

  /**
   * Delete every key under `prefix` on every node; the number deleted. `bestEffort`: skip the
   * nodes that do not answer instead of failing.
   */
  async deletePrefix(prefix: string, bestEffort = false): Promise<number> {
    const counts = await Promise.all(
      this.direct
        .map(async (client) => {
          if (bestEffort && client.status !== 'ready') return 0;
          let deleted = 0;
          let cursor = '0';
          do {
            const [next, keys] = await client.scan(cursor, 'MATCH', `${globEscape(prefix)}*`, 'COUNT', 500);
            cursor = next;
            if (keys.length > 0) deleted += await client.del(...keys);
          } while (cursor !== '0');
          return deleted;
        })
        .map((count) => (bestEffort ? count.catch(() => 0) : count)),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Put every node back the way the run found it: proxies healed (latency, partition, reset
   * removed), paused processes resumed, stopped ones started, and the persistence mode restored
   * (a node restarted without persistence is restarted with its old mode). Resolves once every
   * node is up; returns what it did.
   */
  async restore(signalTimeoutMs = 30_000): Promise<string[]> {
    const done: string[] = [];
    const now = await this.control.nodes();
    await Promise.all(
      now.map(async (node) => {
        const was = this.initial.find((n) => n.id === node.id);
        const persistence: Persistence = was?.persistence ?? node.persistence;
        if (node.fault && node.fault.kind !== 'pass') {
          await this.control.act(node.id, { action: 'heal' });
          done.push(`healed node ${node.id}'s network (${node.fault.kind})`);
        }
        if (node.state === 'paused') {
          await this.control.act(node.id, { action: 'resume' });
          done.push(`resumed node ${node.id}`);
        }
        if (node.state === 'down') {
          // Also cancels a scheduled delayed restart.
          await this.control.act(node.id, { action: 'start', persistence });
          done.push(`started node ${node.id} (${persistence})`);
        } else if (node.persistence !== persistence) {
          await this.control.act(node.id, { action: 'restart', persistence });
          done.push(`restarted node ${node.id} with ${persistence} (was ${node.persistence})`);
        }
      }),
    );
    const deadline = Date.now() + signalTimeoutMs;
    for (;;) {
      const nodes = await this.control.nodes();
      if (nodes.every((n) => n.state === 'up' && (!n.fault || n.fault.kind === 'pass'))) break;
      if (Date.now() > deadline)
        throw new Error(
          `nodes not back up after ${signalTimeoutMs} ms: ${nodes
            .filter((n) => n.state !== 'up')
            .map((n) => n.id)
            .join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    await this.whenReadable(5_000);
    return done;
  }

  /**
   * The end of every run: delete the run's keys from the nodes that answer (so that a node
   * restarted out of `rdb` does not save them in the snapshot it writes on its way down), restore
   * the nodes, delete a backup left in a spare database, wait for packets still travelling through a
   * slow proxy (`maxLatencyMs`), then delete every key under `prefix` until a pass finds none. Never throws: a failure is reported in
   * `error`. Closes the direct connections.
   */
  async restoreAndClean(prefix: string, maxLatencyMs: number): Promise<{ actions: string[]; keysDeleted: number; error: string | null }> {
    const out = { actions: [] as string[], keysDeleted: 0, error: null as string | null };
    try {
      out.keysDeleted = await this.deletePrefix(prefix, true);
      out.actions = await this.restore();
      // A backup never restored (a cancelled run) waits in a spare database: the nodes are up by now.
      for (const node of this.backups) out.keysDeleted += await dropBackup(atNode(this.direct, node)!, prefix);
      await new Promise((r) => setTimeout(r, Math.ceil(maxLatencyMs / 2) + 250));
      out.keysDeleted += await this.deletePrefix(prefix);
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const more = await this.deletePrefix(prefix);
        out.keysDeleted += more;
        if (more === 0) break;
      }
    } catch (err) {
      out.error = (err as Error).message;
    } finally {
      this.close();
    }
    return out;
  }

  /** Resolve once every direct connection answers. */
  async whenReadable(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = await Promise.all(
        this.direct.map((c) =>
          c.ping().then(
            () => true,
            () => false,
          ),
        ),
      );
      if (ok.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error('nodes not readable after restore');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  close(): void {
    for (const c of this.direct) c.disconnect();
  }
}

/** The quarantine in a reading's tail (quarantineUntil, cause, node clock), its end in run time `at`. */
function quarantineOf(tail: unknown[], at: number): NodeSample['quarantine'] {
  const until = Number(tail[0]);
  const nodeNow = Number(tail[2]);
  if (typeof tail[0] !== 'string' || !Number.isFinite(until) || !Number.isFinite(nodeNow) || until <= nodeNow) return null;
  return { until: at + (until - nodeNow), cause: typeof tail[1] === 'string' && tail[1] !== '' ? tail[1] : 'unknown' };
}

function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
