import { describe, expect, it } from 'vitest';
import { TARGETED_CONTROLS } from '../../chaos/harness/controls';
import { armedTrial, UNARMED_RETRIES } from '../../chaos/harness/controls-targeted';
import { MUTANTS } from '../../chaos/harness/mutants';
import { NEMESES, NEMESIS_NAMES } from '../../chaos/harness/nemeses';
import { judgeDefence, TRIAL_KINDS, type DefenceEvidence } from '../../chaos/harness/targeted';

const CEILING = 3_000;
const evidence = (e: Partial<DefenceEvidence>): DefenceEvidence => ({
  aVictimVotes: ['f'],
  bVictimVotes: ['q'],
  bGranted: false,
  sentinel: null,
  shortError: null,
  ceiling: CEILING,
  ...e,
});
const sentinel = (cause: string | undefined, maxTtlMs = CEILING, length = CEILING) =>
  ({ cause, maxTtlMs, createdAt: 1_000, quarantineUntil: 1_000 + length }) as DefenceEvidence['sentinel'];

describe('targeted trials: the defence the safe core owes', () => {
  it('a restart: B refused by the victim, whose sentinel records a restart quarantine; nothing less', () => {
    for (const kind of ['restart-rdb', 'restart-stale-aof'] as const) {
      expect(judgeDefence(kind, evidence({ sentinel: sentinel('restart') }))).toEqual({ defence: 'quarantined (restart)', defended: true });
      // B granted (two holders, or A's lease was over): no defence, whatever the sentinel says.
      expect(judgeDefence(kind, evidence({ bGranted: true, bVictimVotes: ['f'], sentinel: sentinel('restart') })).defended).toBe(false);
      // Refused, but not by the victim (it timed out), or quarantined for another cause: not the defence of this kind.
      expect(judgeDefence(kind, evidence({ bVictimVotes: ['t'], sentinel: sentinel('restart') })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ sentinel: sentinel('data-loss') })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ bVictimVotes: [], sentinel: sentinel('restart') })).defended).toBe(false);
    }
  });

  it("an evicting node never votes for: every one of A's attempts shows unsafe-eviction (or a quarantine); B's may be pending", () => {
    for (const kind of ['evict-volatile-lru', 'evict-allkeys-random'] as const) {
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 'u'], bVictimVotes: ['p'], bGranted: true }))).toEqual({
        defence: 'unsafe-eviction',
        defended: true,
      });
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 'q'], bVictimVotes: ['u'] })).defended).toBe(true);
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 'f'], bVictimVotes: ['u'] }))).toEqual({ defence: null, defended: false });
      // A few late answers among the refusals (a loaded machine) are no vote for; mostly late shows nothing.
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 'u', 'u', 't'], bVictimVotes: ['u'] })).defended).toBe(true);
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 't'], bVictimVotes: ['u'] })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u', 'u', 'p'], bVictimVotes: ['u'] })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ aVictimVotes: ['u'], bVictimVotes: ['f'], bGranted: true })).defended).toBe(false);
    }
    // Every vote late (a loaded machine): the sentinel shows the defence. allkeys-random may have
    // evicted the sentinel itself, found as a data loss (seen in a CI-profile run at a load of 12).
    const late = { aVictimVotes: ['t', 't'], bVictimVotes: ['p'], bGranted: true };
    expect(judgeDefence('evict-allkeys-random', evidence({ ...late, sentinel: sentinel('data-loss') })).defended).toBe(true);
    expect(judgeDefence('evict-allkeys-random', evidence({ ...late, sentinel: sentinel('eviction') })).defended).toBe(true);
    expect(judgeDefence('evict-volatile-lru', evidence({ ...late, sentinel: sentinel('data-loss') })).defended).toBe(false);
    expect(judgeDefence('evict-allkeys-random', evidence({ ...late, sentinel: null })).defended).toBe(false);
  });

  it('a policy switched there and back: B refused by the victim, quarantined for its evictions', () => {
    expect(judgeDefence('evict-flip', evidence({ bVictimVotes: ['q', 'q'], sentinel: sentinel('eviction') })).defended).toBe(true);
    expect(
      judgeDefence('evict-flip', evidence({ bVictimVotes: ['q', 'f'], bGranted: true, sentinel: sentinel('eviction') })).defended,
    ).toBe(false);
    // The sentinel itself evicted: caught as a data loss, which is not the evicted_keys check.
    expect(judgeDefence('evict-flip', evidence({ sentinel: sentinel('data-loss') })).defended).toBe(false);
  });

  it("a short ceiling: the short client refused with MaxTtlMismatchError, and a quarantine as long as the cluster's ceiling", () => {
    const full = evidence({ shortError: 'MaxTtlMismatchError', sentinel: sentinel('data-loss') });
    expect(judgeDefence('short-max-ttl', full).defended).toBe(true);
    expect(judgeDefence('short-max-ttl', { ...full, shortError: 'LockContendedError' }).defended).toBe(false);
    expect(judgeDefence('short-max-ttl', { ...full, sentinel: sentinel('data-loss', 300, 300) }).defended).toBe(false);
    expect(judgeDefence('short-max-ttl', { ...full, sentinel: sentinel('data-loss', CEILING, 300) }).defended).toBe(false);
    expect(judgeDefence('short-max-ttl', { ...full, bGranted: true, bVictimVotes: ['f'] }).defended).toBe(false);
  });

  it('a restart asked about again at half the ceiling: every answer of B refused by the victim, quarantined for the restart', () => {
    expect(judgeDefence('restart-rdb-late', evidence({ bVictimVotes: ['q', 'q', 'q'], sentinel: sentinel('restart') })).defended).toBe(
      true,
    );
    // The late answer granted (the quarantine over too soon): no defence, whatever came first.
    expect(
      judgeDefence('restart-rdb-late', evidence({ bVictimVotes: ['q', 'q', 'f'], bGranted: true, sentinel: sentinel('restart') })).defended,
    ).toBe(false);
  });

  it('data gone back in time: refused by the victim, quarantined as a rollback (a sync may also be named replaced)', () => {
    for (const kind of ['rollback-replicaof', 'rollback-reload', 'rollback-swapdb'] as const) {
      expect(judgeDefence(kind, evidence({ sentinel: sentinel('rollback') }))).toEqual({
        defence: 'quarantined (rollback)',
        defended: true,
      });
      expect(judgeDefence(kind, evidence({ bGranted: true, bVictimVotes: ['f'], sentinel: sentinel('rollback') })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ sentinel: sentinel('data-loss') })).defended).toBe(false);
      expect(judgeDefence(kind, evidence({ sentinel: sentinel('replaced') })).defended).toBe(kind === 'rollback-replicaof');
    }
  });

  it('a clock step: refused by the victim, quarantined for its clock', () => {
    expect(judgeDefence('clock-jump', evidence({ sentinel: sentinel('clock-jump') })).defended).toBe(true);
    expect(judgeDefence('clock-jump', evidence({ bVictimVotes: ['c'], sentinel: null })).defended).toBe(false);
    expect(judgeDefence('clock-jump', evidence({ sentinel: sentinel('rollback') })).defended).toBe(false);
  });
});

describe('targeted nemeses and their controls', () => {
  it('every targeted nemesis has a negative control that runs its trial with something unsafe, and every control names what exists', () => {
    const targeted = NEMESIS_NAMES.filter((n) => NEMESES[n].targeted);
    expect(targeted).toEqual([
      'restart-rdb',
      'restart-stale-aof',
      'evict-volatile-lru',
      'evict-allkeys-random',
      'short-max-ttl',
      'lose-data',
      'lose-majority',
      'fence-stall',
      'restart-rdb-late',
      'rollback-replicaof',
      'rollback-reload',
      'rollback-swapdb',
      'clock-jump',
    ]);
    for (const name of targeted) {
      const negatives = TARGETED_CONTROLS.filter((c) => c.nemesis === name && c.negative);
      expect(negatives.length, name).toBeGreaterThan(0);
      for (const c of negatives) {
        expect(c.kind).toBe(NEMESES[name].targeted);
        // Unsafe on purpose: the node checks or the quarantine off, or a build without the defence.
        expect(c.settings.nodeChecks === false || c.settings.quarantine === false || c.build !== undefined, c.name).toBe(true);
      }
    }
    for (const c of TARGETED_CONTROLS) {
      expect(TRIAL_KINDS).toContain(c.kind);
      if (c.nemesis) expect(NEMESIS_NAMES).toContain(c.nemesis);
      if (c.build) expect(MUTANTS.map((m) => m.name)).toContain(c.build);
      if (!c.negative) expect(c.seeds).toBeGreaterThan(0);
    }
    // The run-time flip of the policy has its safe twin and its negative control, outside any phase.
    expect(
      TARGETED_CONTROLS.filter((c) => c.kind === 'evict-flip')
        .map((c) => c.negative)
        .sort(),
    ).toEqual([false, true]);
  });
});

describe('targeted controls: a trial whose danger was not in place proves nothing, so it is run again on another seed', () => {
  const trial = (outcomes: Array<{ armed: boolean; violations?: number }>) => {
    const seeds: number[] = [];
    const run = async (seed: number) => {
      const o = outcomes[seeds.length]!;
      seeds.push(seed);
      return { result: { armed: o.armed, detail: `detail ${seed}` }, analysis: { violations: o.violations ?? 0 } };
    };
    return { seeds, run };
  };

  it('an armed trial counts as it is', async () => {
    const t = trial([{ armed: true }]);
    const out = await armedTrial(1001, t.run);
    expect(t.seeds).toEqual([1001]);
    expect(out).toMatchObject({ seed: 1001, unarmed: [] });
  });

  it('an unarmed one (evict-flip: the sentinel evicted first) runs again on another seed, and the report says which', async () => {
    const t = trial([{ armed: false }, { armed: true }]);
    const out = await armedTrial(1001, t.run);
    expect(t.seeds).toEqual([1001, 11001]);
    expect(out.seed).toBe(11001);
    expect(out.unarmed).toEqual(['seed 1001: detail 1001']);
    expect(out.value.result.armed).toBe(true);
  });

  it('a violation is never retried away, armed or not; and the retries are bounded', async () => {
    const violated = trial([{ armed: false, violations: 2 }, { armed: true }]);
    expect((await armedTrial(7, violated.run)).value.analysis.violations).toBe(2);
    expect(violated.seeds).toEqual([7]);
    const never = trial([{ armed: false }, { armed: false }, { armed: false }, { armed: true }]);
    const out = await armedTrial(7, never.run);
    expect(never.seeds).toHaveLength(UNARMED_RETRIES + 1);
    expect(out.value.result.armed).toBe(false);
  });
});
