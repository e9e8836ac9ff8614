import type { NodeAction } from '../api/node-actions';
import type { Persistence } from '../cluster/persistence';
import type { ScenarioId } from '../api/scenarios';
import type { Prng } from './prng';

/**
 * The typed script of a scenario: a list of steps the engine runs in order against the real
 * sandbox cluster. Every step says one short thing (`say`). A step marked `chain` runs right after
 * the previous one, with no pause between: pause and step stop only at the start of a step that is
 * not chained, so a timing-critical sequence (acquire, then crash, then acquire) is never cut.
 */

export type NodeId = 1 | 2 | 3 | 4 | 5;

/** How one scenario client is configured (each is its own Redlock instance). */
export interface ClientSpec {
  name: string;
  description: string;
  /** `false` is the explicit UNSAFE negative control (scenario 3). @default true */
  quarantine?: boolean;
  /**
   * The lock core's node checks (a new redis-server process, data gone back in time within one
   * process, a clock jump: each sits out a quarantine). `false` is the explicit UNSAFE negative
   * control (scenarios 9 and 12): only a missing sentinel is detected. @default true
   */
  nodeChecks?: boolean;
  /** @default 0.01 */
  driftFactor?: number;
  /** Per-round node deadline. @default 250 (DEMO_NODE_TIMEOUT_MS) */
  nodeTimeoutMs?: number;
  /** Nodes this client reaches directly (no fault proxy, no added latency); the rest through the proxies. @default none */
  near?: readonly NodeId[];
  /**
   * The nodes this client locks on: `[1]` makes it a single-instance lock (the lock core configured
   * with one node, so one vote is its majority). @default all five
   */
  nodes?: readonly NodeId[];
}

export interface RetrySpec {
  count: number;
  delayMs: number;
  jitterMs: number;
}

interface Base {
  /** Stable id (tests and the UI use it). */
  id: string;
  /** Short title for the step list. */
  title: string;
  /** Narration, one or two sentences. */
  say: string;
  /** Run right after the previous step, without a pause boundary. */
  chain?: boolean;
}

export type Step = Base &
  (
    | {
        do: 'mark-clean';
        /**
         * Mark the nodes one at a time in this order instead of all at once. A fence register starts
         * from the node's clock when it is marked, so the order decides which registers start ahead
         * (say so in `simulated` when a scenario relies on it).
         */
        order?: readonly NodeId[];
      }
    | {
        do: 'ensure-persistence';
        mode: Persistence;
        /** Only these nodes (the rest keep theirs). @default every node */
        nodes?: readonly NodeId[];
      }
    /** The node writes its RDB snapshot now (SAVE): what a restart in `rdb` mode will load. */
    | { do: 'snapshot'; nodes: readonly NodeId[] }
    /**
     * A backup of the node, taken now: this run's keys copied into the node's spare database
     * (backup.ts). What a later `restore-backup` step brings back.
     */
    | { do: 'backup'; nodes: readonly [NodeId] }
    /**
     * The node restored in place from its backup while it runs, by SWAPDB with its spare database:
     * the same redis-server process, this run's keys back as they were at the backup, every other
     * key as it is (backup.ts).
     */
    | { do: 'restore-backup'; nodes: readonly [NodeId] }
    /**
     * What fsync on every write costs, measured: `count` writes one after another on the node as it
     * runs (aof-always), then as many with appendfsync everysec (set back right after); the fact
     * gives the time per write of each.
     */
    | { do: 'measure-fsync'; nodes: readonly [NodeId]; count: number; fact: string; factLabel: string }
    | { do: 'predict'; question: string; choices: ReadonlyArray<{ id: string; label: string }> }
    | {
        do: 'acquire';
        who: string;
        resource: string;
        ttlMs: number;
        fenced?: boolean;
        retry?: RetrySpec;
        /** Wait until this client's connections to these nodes are up before asking (restarted nodes). */
        waitForNodes?: readonly NodeId[];
        /** Run in the background; a later `await` step waits for it. */
        background?: boolean;
        /** Answer the prediction with this id by the outcome kind ('granted', 'LockContendedError'…). */
        reveals?: string;
        /**
         * 'outcome' (the default): by the outcome kind. 'overlap': by the checker, 'overlap' when this
         * grant made two holders at once, else 'no-overlap'. 'granted': 'granted' or 'refused', for a
         * refusal whose class depends on which votes arrive first (the lock core decides a round as
         * soon as its outcome is known).
         */
        revealBy?: 'outcome' | 'overlap' | 'granted';
        /** Shown when revealing, by outcome. */
        explain?: Partial<Record<string, string>>;
      }
    | { do: 'await'; who: string; measureFrom?: { mark: string; fact: string; label: string } }
    | { do: 'release'; who: string; resource: string; mark?: string }
    | { do: 'write'; who: string; resource: string; value: string; reveals?: string; explain?: Partial<Record<string, string>> }
    /**
     * The client sends a write to the stores, with the fence of the lock it holds now, and the
     * network holds it (simulated: the engine keeps the write until a `deliver-write` step).
     */
    | { do: 'send-write'; who: string; resource: string; value: string }
    /**
     * The write sent by the `send-write` step `sent` arrives at the stores now. `revealsPlain` and
     * `revealsFenced` answer 'yes' or 'no': does that store still hold `keeps`'s last value?
     */
    | {
        do: 'deliver-write';
        sent: string;
        keeps: string;
        revealsPlain?: string;
        revealsFenced?: string;
        explain?: Partial<Record<string, string>>;
      }
    /**
     * What a lock costs, measured: `count` acquire + release pairs by each client, one after
     * another (after one pair each to warm up); the facts `<fact>-<client>` give the median and range.
     */
    | { do: 'measure-locks'; who: readonly string[]; resource: string; ttlMs: number; count: number; fact: string }
    | { do: 'node'; action: NodeAction; nodes: readonly NodeId[]; mark?: string }
    | { do: 'wait'; ms: number }
    | { do: 'wait-validity'; who: string; resource: string; plusMs?: number }
    | { do: 'wait-keys-gone'; resource: string; timeoutMs?: number }
    | { do: 'wait-nodes-up'; nodes: readonly NodeId[]; timeoutMs?: number }
    /**
     * Wait until the quarantine recorded on each node (its epoch sentinel for the run's prefix) is
     * over, read on the node's own clock; the fact says how long it sat out after its process started.
     */
    | { do: 'wait-quarantine'; nodes: readonly NodeId[]; fact?: { id: string; label: string }; timeoutMs?: number }
    /** Record as a fact whether `later`'s fence on `resource` is above `earlier`'s (their last grants). */
    | { do: 'compare-fences'; resource: string; earlier: string; later: string; fact: string; factLabel: string }
    | { do: 'pause-client'; who: string }
    | { do: 'wake-client'; who: string }
    /**
     * A clock jump, simulated: on each node, what is left of the key's TTL is cut once to
     * left / (1 + fastPercent / 100), as if the node's clock had jumped ahead by the difference.
     */
    | { do: 'drift'; who: string; resource: string; nodes: readonly NodeId[]; fastPercent: number }
    | {
        do: 'together';
        who: readonly string[];
        resource: string;
        ttlMs: number;
        retry: RetrySpec;
        /** After a grant: write, hold this long (real ms), release. */
        work?: { holdMs: number };
        reveals?: string;
        explain?: Partial<Record<string, string>>;
      }
    | { do: 'probe'; who: string; resource: string; since: string; fact: string; factLabel: string; timeoutMs?: number }
  );

export type StepKind = Step['do'];
/** The step of one kind (or of several). */
export type StepOf<K extends StepKind> = Extract<Step, { do: K }>;

export interface ScenarioScript {
  clients: readonly ClientSpec[];
  /**
   * The resources the clients lock. One with `limit` is a semaphore of that many permits: an
   * `acquire` of it takes one permit (a free slot, each slot a mutex), the sampler reads its slots'
   * keys, and the checker allows `limit` holders at once.
   */
  resources: ReadonlyArray<{ name: string; description: string; limit?: number }>;
  /** The lease ceiling of the run's prefix (quarantine length). */
  maxTtlMs: number;
  /** The main ttl of the scenario (for the header). */
  ttlMs: number;
  /** Honest list of what is simulated rather than real. */
  simulated: readonly string[];
  steps: readonly Step[];
}

export interface ScenarioDefinition {
  id: ScenarioId;
  number: number;
  title: string;
  summary: string;
  lesson: string;
  estimatedSeconds: number;
  tags: readonly string[];
  /** The script for a seed: every choice (which nodes fail, who is near which node) comes from `rng`. */
  build(rng: Prng): ScenarioScript;
}

/** The semaphores of a script: their number of permits, by resource name. */
export function limitsOf(script: Pick<ScenarioScript, 'resources'>): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const r of script.resources) if (r.limit !== undefined) limits[r.name] = r.limit;
  return limits;
}

/** Helpers for the catalog. */
export const nodeList = (ids: readonly number[]): string => {
  const names = ids.map(String);
  if (names.length <= 1) return `node ${names[0] ?? ''}`;
  return `nodes ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
};

/** `nodeList`, capitalised for the start of a sentence. */
export const Nodes = (ids: readonly number[]): string => {
  const text = nodeList(ids);
  return text.charAt(0).toUpperCase() + text.slice(1);
};

export function pickNodes(rng: Prng, count: number): NodeId[] {
  return (rng.shuffle([1, 2, 3, 4, 5]) as NodeId[]).slice(0, count).sort((a, b) => a - b);
}

export function otherNodes(taken: readonly NodeId[]): NodeId[] {
  return ([1, 2, 3, 4, 5] as NodeId[]).filter((n) => !taken.includes(n));
}
