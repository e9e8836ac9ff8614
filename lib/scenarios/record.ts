import type { NodeLaneState, Outcome, Prediction, ScenarioVote, StepView, TimelineView } from '../api/scenarios';
import type { Vote } from '@redlock-console/redlock';
import { checkMutualExclusion, type CheckerResult } from './checker';
import { FencedRegister, PlainRegister, type WriteAttempt } from './registers';
import {
  assembleFenceChanges,
  assembleKeySegments,
  assembleQuarantineSegments,
  assembleStateSegments,
  type NodeSample,
  type StateObservation,
} from './timeline';

export type Tone = 'info' | 'ok' | 'warn' | 'bad' | 'muted';

export interface BeliefRecord {
  client: string;
  resource: string;
  from: number;
  validUntil: number;
  to: number | null;
  fence: number | null;
  /** A semaphore permit's slot (its fence is ordered among that slot's grants only); absent for a lock. */
  slot?: number;
  stale: boolean;
  ended: 'open' | 'released' | 'expired' | 'abandoned';
}

export type AttemptRecord = TimelineView['attempts'][number];
export type WriteRecord = TimelineView['writes'][number];
export type MarkerRecord = TimelineView['markers'][number];

const MAX_SAMPLES = 20_000;
const MAX_LOG = 400;

/** Everything a run has seen and done, and the views built from it. Mutable; owned by one run. */
export class RunRecord {
  readonly samples: NodeSample[] = [];
  readonly states: StateObservation<NodeLaneState>[] = [];
  readonly markers: MarkerRecord[] = [];
  readonly beliefs: BeliefRecord[] = [];
  readonly attempts: AttemptRecord[] = [];
  readonly writes: WriteRecord[] = [];
  readonly log: Array<{ t: number; text: string; tone: Tone }> = [];
  readonly facts: Array<{ id: string; label: string; value: string }> = [];
  readonly predictions: Prediction[] = [];
  readonly plain = new PlainRegister();
  readonly fenced = new FencedRegister();
  private readonly lastState = new Map<number, string>();
  /** Was `client` paused at run time `t`? (Set by the run: a paused client keeps believing.) */
  pausedAt: (client: string, t: number) => boolean = () => false;

  /** `limits`: a semaphore's number of permits, by resource (the checker allows that many holders). */
  constructor(
    readonly steps: StepView[],
    private readonly resources: readonly string[],
    private readonly limits: Readonly<Record<string, number>> = {},
  ) {}

  sample(s: NodeSample): void {
    if (this.samples.length < MAX_SAMPLES) this.samples.push(s);
  }

  state(t: number, node: number, state: NodeLaneState, detail: string): void {
    const key = `${state}\u0000${detail}`;
    if (this.lastState.get(node) === key) return;
    this.lastState.set(node, key);
    this.states.push({ t, node, state, detail });
  }

  mark(t: number, kind: string, label: string, where: { node?: number; client?: string }): void {
    this.markers.push({ t, kind, label, node: where.node ?? null, client: where.client ?? null });
  }

  say(t: number, text: string, tone: Tone = 'info'): void {
    this.log.push({ t, text, tone });
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
  }

  fact(id: string, label: string, value: string): void {
    const existing = this.facts.find((f) => f.id === id);
    if (existing) existing.value = value;
    else this.facts.push({ id, label, value });
  }

  /** End beliefs whose validity ran out (a paused client keeps believing: it cannot look at its clock). */
  settle(now: number): void {
    for (const b of this.beliefs) {
      if (b.to !== null || now < b.validUntil) continue;
      if (this.pausedAt(b.client, b.validUntil)) b.stale = true;
      else if (!b.stale) {
        b.to = b.validUntil;
        b.ended = 'expired';
      }
    }
  }

  /** The open belief of `client` on `resource`, if any. */
  openBelief(client: string, resource: string): BeliefRecord | undefined {
    return this.beliefs.find((b) => b.client === client && b.resource === resource && b.to === null);
  }

  endBelief(client: string, resource: string, t: number, how: BeliefRecord['ended']): BeliefRecord | undefined {
    this.settle(t); // a belief whose validity already ran out ended then, not now
    const b = this.openBelief(client, resource);
    if (b) {
      b.to = t;
      b.ended = how;
    }
    return b;
  }

  /** Write to both stores as `client` with its fence. */
  write(attempt: WriteAttempt): WriteRecord {
    this.plain.write(attempt);
    const fenced = this.fenced.write(attempt);
    if (fenced.tie) {
      // Not a stale write but a broken fence: two holders were handed the same number. Say so in
      // the results and the log, whatever the checker says about beliefs.
      const ties = this.fenced.ties.map((x) => `${x.clients[0]} and ${x.clients[1]} both wrote with fence ${x.fence}`);
      this.fact('fence-tie', 'Fence tie (two holders, one fence)', `${ties.join('; ')}: the fenced store refused the second`);
      this.say(attempt.t, `Fence tie: ${fenced.tie.with} and ${attempt.client} hold the same fence ${fenced.tie.fence}`, 'bad');
    }
    const record: WriteRecord = {
      t: attempt.t,
      client: attempt.client,
      resource: attempt.resource,
      fence: attempt.fence,
      value: attempt.value,
      unfenced: 'accepted',
      fenced: fenced.accepted ? 'accepted' : 'rejected',
      reason: fenced.reason,
    };
    this.writes.push(record);
    return record;
  }

  checker(now: number): CheckerResult {
    this.settle(now);
    return checkMutualExclusion(this.beliefs, now, this.resources, this.limits);
  }

  timeline(now: number): TimelineView {
    const keys = assembleKeySegments(this.samples).map((s) => ({
      node: s.node,
      resource: s.resource,
      client: s.client,
      from: s.from,
      to: s.to,
      expiresAt: Number.isFinite(s.expiresAt) ? s.expiresAt : s.to,
      open: s.open,
    }));
    return {
      now,
      nodeStates: assembleStateSegments(this.states),
      keys,
      quarantines: assembleQuarantineSegments(this.samples),
      fences: assembleFenceChanges(this.samples),
      markers: this.markers,
      beliefs: this.beliefs.map((b) => ({
        client: b.client,
        resource: b.resource,
        from: b.from,
        validUntil: b.validUntil,
        to: b.to,
        fence: b.fence,
        stale: b.stale,
        ended: b.ended,
      })),
      attempts: this.attempts,
      writes: this.writes,
    };
  }
}

export function voteViews(votes: readonly Vote[]): ScenarioVote[] {
  return votes.map((v) => ({ node: v.node, vote: v.vote, reason: v.reason, ...(v.detail ? { detail: v.detail.slice(0, 160) } : {}) }));
}

export function outcomeOf(err: unknown): Outcome {
  const name = (err as { name?: string } | null)?.name;
  if (name === 'LockContendedError' || name === 'QuorumUnavailableError' || name === 'LockExpiredError') return name;
  if (name === 'AbortError') return 'aborted';
  return 'error';
}

const REASON_WORDS: Record<string, string> = {
  pending: 'not awaited',
  error: 'unreachable',
  contended: 'held by another',
  quarantined: 'quarantined',
  timeout: 'timed out',
  'not-asked': 'not asked',
  lost: 'lost the key',
  'not-held': 'nothing to delete',
  'unsafe-eviction': 'may evict keys',
  'ceiling-mismatch': 'another lease ceiling',
};

/** `3 for · 2 held by another` */
export function voteSummary(votes: readonly ScenarioVote[]): string {
  const inFavour = votes.filter((v) => v.vote === 'for').length;
  const against = new Map<string, number>();
  for (const v of votes) if (v.vote === 'against') against.set(v.reason, (against.get(v.reason) ?? 0) + 1);
  return [`${inFavour} for`, ...[...against].map(([reason, n]) => `${n} ${REASON_WORDS[reason] ?? reason}`)].join(' · ');
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}
