/** Judging a targeted trial's defence (chaos/harness/targeted.ts) from what it saw of the victim. */
import type { EpochSentinel } from '@redlock-console/redlock';
import type { TrialKind } from './targeted-kinds';

/** What a trial saw of the victim, for {@link judgeDefence}. */
export interface DefenceEvidence {
  /** The victim's vote (VoteString code) in the last attempt of each of A's acquires. */
  aVictimVotes: readonly string[];
  /** The victim's vote in B's answers (see answerOf), and whether B was granted any. */
  bVictimVotes: readonly string[];
  bGranted: boolean;
  /** The victim's epoch sentinel of the trial's prefix after B's answers (null: none). */
  sentinel: Pick<EpochSentinel, 'cause' | 'maxTtlMs' | 'createdAt' | 'quarantineUntil'> | null;
  /** The error class of the short client's attempt (short-max-ttl). */
  shortError: string | null;
  /** The cluster's ceiling (the trial's maxTtlMs). */
  ceiling: number;
}

/** Did the victim defend itself the way the safe core must (TRIAL_DEFENCES)? And what was seen. */
export function judgeDefence(kind: TrialKind, e: DefenceEvidence): { defence: string | null; defended: boolean } {
  const s = e.sentinel;
  const refusedByVictim = !e.bGranted && e.bVictimVotes.length > 0 && e.bVictimVotes.every((x) => x === 'q');
  const quarantine = s?.cause ? `quarantined (${s.cause})` : null;
  switch (kind) {
    case 'restart-rdb':
    case 'restart-stale-aof':
    case 'restart-rdb-late':
      return { defence: quarantine, defended: refusedByVictim && s?.cause === 'restart' };
    case 'rollback-replicaof':
      // A sync replaced the data: the core may name it that way too.
      return { defence: quarantine, defended: refusedByVictim && (s?.cause === 'rollback' || s?.cause === 'replaced') };
    case 'rollback-reload':
    case 'rollback-swapdb':
      return { defence: quarantine, defended: refusedByVictim && s?.cause === 'rollback' };
    case 'clock-jump':
      return { defence: quarantine, defended: refusedByVictim && s?.cause === 'clock-jump' };
    case 'evict-flip':
      return { defence: quarantine, defended: refusedByVictim && s?.cause === 'eviction' };
    case 'lose-data':
      return { defence: quarantine, defended: refusedByVictim && s?.cause === 'data-loss' };
    case 'lose-majority':
    case 'fence-stall':
      // Judged by their own trials (targeted-reseed.ts, targeted-fence.ts).
      return { defence: null, defended: false };
    case 'evict-volatile-lru':
    case 'evict-allkeys-random': {
      // A's attempts could not be decided without the victim (its links to the others were cut):
      // each shows the victim's own answer. B's may have been decided before the victim answered.
      // On a loaded machine the victim under memory pressure may answer A only after the round's
      // deadline (every vote a timeout): then the defence is the eviction quarantine its sentinel
      // records, provided it never voted for.
      // allkeys-random may evict the sentinel itself (one key among A's): its check then finds no
      // sentinel and records a data-loss quarantine, the same defence under another name.
      const all = [...e.aVictimVotes, ...e.bVictimVotes];
      const cause = s?.cause === 'eviction' || (kind === 'evict-allkeys-random' && s?.cause === 'data-loss');
      const recorded = !all.includes('f') && cause;
      const defence = all.includes('f')
        ? null
        : all.includes('u')
          ? 'unsafe-eviction'
          : all.includes('q')
            ? 'quarantined'
            : recorded
              ? 'quarantined (recorded; its votes timed out)'
              : null;
      // A vote the victim did not give in time (t) is not a vote for, and on a loaded machine a few
      // of A's hundred attempts meet one: the defence is seen when every answer it did give refused
      // (u or q) and those answers are most of A's attempts (a victim that only timed out showed
      // nothing, and is judged by its sentinel above).
      const refusals = e.aVictimVotes.filter((x) => x === 'u' || x === 'q').length;
      const answeredOrLate = e.aVictimVotes.every((x) => x === 'u' || x === 'q' || x === 't');
      const voted = answeredOrLate && refusals > 0 && refusals * 2 > e.aVictimVotes.length;
      return { defence, defended: defence !== null && (voted || recorded) };
    }
    case 'short-max-ttl': {
      const mismatch = e.shortError === 'MaxTtlMismatchError';
      const full = s?.cause === 'data-loss' && s.maxTtlMs === e.ceiling && s.quarantineUntil - s.createdAt === e.ceiling;
      return {
        defence: mismatch
          ? `short client refused (MaxTtlMismatchError); quarantine of ${s ? s.quarantineUntil - s.createdAt : 'no'} ms`
          : null,
        defended: mismatch && refusedByVictim && full,
      };
    }
  }
}
