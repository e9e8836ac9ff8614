/**
 * Mutants: deliberately broken builds of the lock core. Each is a copy of the core's source with one
 * small source patch; the harness must catch every one. A patch whose target text is not found
 * (or found a different number of times) fails the build loudly, so a refactor of the core cannot
 * silently turn a mutant into the real thing.
 */
import type { NemesisName } from './nemeses';

export interface SourcePatch {
  /** Path inside the core's source directory (packages/redlock/src). */
  file: string;
  find: string;
  replace: string;
  /** How many times `find` must occur. @default 1 */
  count?: number;
}

export interface Mutant {
  name: string;
  description: string;
  patches: readonly SourcePatch[];
  /** Nemeses to try, in order (a repeat is a second attempt with another seed), until one catches it. */
  nemeses: readonly NemesisName[];
  /** Fault cycles per attempt. */
  cycles: number;
  /** The loops its phases run: all (default), or the semaphore and read-write lock loops alone. */
  loops?: 'all' | 'slots';
  /**
   * Checkers of which one must find it for it to count as caught (default: any). A mutant aimed at
   * the slot checkers names them, so that another checker catching it proves nothing about them.
   */
  expect?: readonly string[];
}

/** The quorum ⌊N/2⌋ instead of ⌊N/2⌋+1 (quorum-floor and its slot-loop twin). */
const QUORUM_FLOOR: SourcePatch = {
  file: 'quorum.ts',
  find: 'return Math.floor(nodeCount / 2) + 1;',
  replace: 'return Math.floor(nodeCount / 2);',
};
/** A failed attempt's keys left, every node reported answered (no-cleanup and its slot-loop twin). */
const NO_CLEANUP: SourcePatch = {
  file: 'protocol.ts',
  find: '  const cleanup = await releaseEverywhere(ctx, req.lockKeys, token, req.resources);',
  replace: "  const cleanup = { votes: round.votes.map((v) => ({ ...v, reason: 'ok' as const })) };",
};
/**
 * No fence proposed with the grant (fence-ahead.ts): every fence comes from the fence round. For the
 * mutants of the fence round and the registers: a proposal from the nodes' clock (all workers read
 * the same one) stands above a register that went wrong, so the fault would show only by the
 * clock's luck. The proposal's own checks are pinned by redlock-fence-ahead.test.ts.
 */
const NO_PROPOSAL: SourcePatch = {
  file: 'fence-ahead.ts',
  find: '  if (!(proposal <= MAX_PROPOSAL)) return null;',
  replace: '  if (proposal) return null;',
};
/** What the slot checkers (check-slots.ts) report as. */
const SLOT_SAFETY = ['capacity', 'rw-exclusion', 'slot-overlap', 'slot-fencing'] as const;

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'quorum-floor',
    description: 'quorum ⌊N/2⌋ instead of ⌊N/2⌋+1',
    patches: [QUORUM_FLOOR],
    nemeses: ['ring-partition', 'none'],
    cycles: 4,
  },
  {
    name: 'drift-ignored',
    description: 'clock drift not subtracted from the validity',
    patches: [
      { file: 'quorum.ts', find: 'return ttlMs * driftFactor + 2;', replace: 'return 0;' },
      { file: 'protocol.ts', find: 'const drift = ttlMs * settings.driftFactor + 2;', replace: 'const drift = 0;' },
      { file: 'extend-round.ts', find: 'const drift = ttlMs * settings.driftFactor + 2;', replace: 'const drift = 0;' },
    ],
    nemeses: ['skew', 'skew'],
    cycles: 3,
  },
  {
    name: 'no-validity-check',
    description: 'a lock is granted even when no validity is left',
    patches: [
      {
        file: 'protocol.ts',
        find: 'if ((!req.fenced || fence !== null) && validity > 0) {',
        replace: 'if (!req.fenced || fence !== null) {',
      },
    ],
    nemeses: ['pause-client', 'pause-client'],
    cycles: 8,
  },
  {
    name: 'release-plain-del',
    description: 'release by plain DEL, without comparing the token',
    patches: [
      {
        file: 'scripts/release.lua',
        find: 'if value == token or (value and string.sub(value, 1, #head) == head) then',
        replace: 'if value then',
      },
      // The same release, merged with others of its batch (release-group.ts).
      {
        file: 'scripts/release-many.lua',
        find: 'if value == token or (value and string.sub(value, 1, #head) == head) then',
        replace: 'if value then',
      },
    ],
    nemeses: ['none', 'pause-client'],
    cycles: 4,
  },
  {
    name: 'extend-minority',
    description: 'an extension accepted on a minority of the nodes',
    patches: [
      {
        file: 'extend-round.ts',
        find: 'if (round.forCount >= quorum && validity > 0 && !late) {',
        replace: 'if (round.forCount >= 1 && validity > 0 && !late) {',
      },
    ],
    nemeses: ['blackhole-majority', 'blackhole-majority'],
    cycles: 6,
  },
  {
    name: 'quorum-connected',
    description: 'quorum counted over the connected nodes instead of all N',
    patches: [
      {
        file: 'redlock.ts',
        find: '      quorum: this.quorum,',
        replace: '      get quorum() { return Math.floor(created.filter((n) => n.ready).length / 2) + 1; },',
      },
    ],
    nemeses: ['ring-partition'],
    cycles: 6,
  },
  {
    // The probe's restart branch starts no quarantine: a node back from an older snapshot keeps its
    // old sentinel, its old register and its vote (the check adopts the new process instead).
    name: 'restart-detection-ignored',
    description: 'a restarted node (new run_id) is not quarantined',
    patches: [{ file: 'scripts/probe.lua', find: "cause = 'restart'", replace: 'cause = false' }],
    nemeses: ['restart-rdb', 'restart-stale-aof'],
    cycles: 3,
  },
  {
    // The behaviour before the ceiling agreement: no client compares ceilings, and a client starts
    // a quarantine as long as its own maxTtlMs on a node without a sentinel. Also the build of the
    // short-max-ttl negative control (nodeChecks: false does not switch the agreement off).
    name: 'ceiling-agreement-ignored',
    description: 'nodes recording another maxTtlMs are trusted, and a client quarantines for its own ceiling',
    patches: [
      {
        file: 'grant-verdict.ts',
        find: 'if (recorded !== probes.maxTtlMs) {',
        replace: 'if (recorded !== probes.maxTtlMs && recorded < 0) {',
      },
      // Every client counts as agreeing with the cluster's ceiling from the start (the ClusterView's
      // initial value: the only `ceilingAgreed: false` in the file, however the object is laid out).
      { file: 'grant-plan.ts', find: 'ceilingAgreed: false,', replace: 'ceilingAgreed: true,' },
    ],
    nemeses: ['short-max-ttl'],
    cycles: 3,
  },
  {
    // A node's quarantine is read and then ignored: a node that lost the holder's key votes for the
    // next client as if it still held every lock it granted.
    name: 'quarantine-ignored',
    description: 'an active quarantine treated as clean',
    patches: [{ file: 'grant-verdict.ts', find: '    if (verdict !== null) {', replace: '    if (verdict !== null && verdict < 0) {' }],
    nemeses: ['lose-data', 'lose-data'],
    cycles: 3,
  },
  {
    // A node found without its data keeps the fence register it came back with (none): the next
    // grant's fence is computed from registers that never saw the fences issued before.
    name: 'reseed-missing',
    description: 'the fence register is not reseeded after a data loss',
    patches: [
      { file: 'scripts/probe.lua', find: '  register = math.max(register, now * 1000)', replace: '  register = register' },
      { file: 'grant-verdict.ts', find: '    if (probe.reseed) return [5, Number(probe.createdAt)];', replace: '' },
      {
        file: 'grant-group.ts',
        find: '    if (!this.judging || !probe.reseed ||',
        replace: '    if (true || !this.judging || !probe.reseed ||',
      },
      NO_PROPOSAL,
    ],
    nemeses: ['lose-majority', 'lose-majority'],
    cycles: 2,
  },
  {
    // Both of extend's validity checks gone (before the round and after it): an extend made after
    // the lock's validity ended is accepted while the keys are still there.
    name: 'extend-after-validity',
    description: "an extend accepted after the lock's validity ended",
    patches: [
      {
        file: 'extend-round.ts',
        find: '  if (validUntil !== null && validUntil <= t0) {',
        replace: '  if (validUntil !== null && validUntil <= t0 && ttlMs < 0) {',
      },
      {
        file: 'extend-round.ts',
        find: '  const limit = validUntil === null ? horizon : Math.min(horizon, validUntil - t0);',
        replace: '  const limit = horizon;',
      },
      {
        file: 'extend-round.ts',
        find: '  const late = validUntil !== null && now >= validUntil;',
        replace: '  const late = validUntil === null && now < 0;',
      },
    ],
    nemeses: ['late-extend', 'late-extend'],
    cycles: 6,
  },
  {
    // A failed attempt's keys are left to expire: no cleanup release, and every node reported as
    // having answered it (a core that forgot the release knows of nothing pending).
    name: 'no-cleanup',
    description: 'a failed attempt does not release its partial keys',
    patches: [NO_CLEANUP],
    // A failed attempt with a partial grant needs a split vote, rare without faults: 2 cycles per
    // trial left both trials of one loaded CI run without one (the mutant uncaught), so 8.
    nemeses: ['none', 'none'],
    cycles: 8,
  },
  {
    // A release that says it deleted but leaves the key to expire.
    name: 'release-keeps-key',
    description: 'a release reports the key deleted but leaves it',
    patches: [
      { file: 'scripts/release.lua', find: "    redis.call('DEL', KEYS[i])", replace: "    redis.call('EXISTS', KEYS[i])" },
      // The same release, merged with others of its batch (release-group.ts).
      { file: 'scripts/release-many.lua', find: "      redis.call('DEL', key)", replace: "      redis.call('EXISTS', key)" },
    ],
    nemeses: ['none', 'none'],
    cycles: 2,
  },
  {
    // The restart quarantine a quarter of the ceiling long: a node back from an older snapshot is
    // trusted again while locks it granted before its restart may still be held (caught only by a
    // grant attempt there after that quarter and before the ceiling: restart-rdb-late).
    name: 'restart-quarantine-short',
    description: 'a restart quarantine a quarter of the ceiling long',
    patches: [
      {
        file: 'scripts/probe.lua',
        find: '  untilMs = (synced and now or serverStart) + ceiling\n',
        replace: '  untilMs = (synced and now or serverStart) + ceiling / 4\n',
      },
    ],
    nemeses: ['restart-rdb-late', 'restart-rdb-late'],
    cycles: 2,
  },
  {
    name: 'fence-no-increment',
    description: 'fence = max(registers) without +1',
    patches: [
      { file: 'fence-round.ts', find: '  const fence = Math.max(max + 1, floor);', replace: '  const fence = Math.max(max, floor);' },
      NO_PROPOSAL,
    ],
    nemeses: ['none', 'none'],
    cycles: 2,
  },
  {
    // The fence round decides at its first confirmation: a fence raised on a minority only.
    name: 'fence-single-confirmation',
    description: 'the fence round accepts a single confirmation',
    patches: [
      { file: 'fence-round.ts', find: '    super(ctx.nodes, ctx.quorum, false,', replace: '    super(ctx.nodes, 1, false,' },
      {
        file: 'fence-round.ts',
        find: '  if (round.forCount >= ctx.quorum) return { ok: true, fence, votes: round.votes };',
        replace: '  if (round.forCount >= 1) return { ok: true, fence, votes: round.votes };',
      },
      NO_PROPOSAL,
    ],
    nemeses: ['fence-stall', 'fence-stall'],
    cycles: 2,
  },
  // The slot loops alone (no lock loop runs), each caught only by a slot checker.
  {
    // Every client of the build counts limit + 1 slots (and records that limit, so they agree):
    // each slot is still a mutex, so only the holder count can see it.
    name: 'semaphore-extra-slot',
    description: 'a semaphore of n permits hands out n + 1 slots',
    patches: [
      {
        file: 'semaphore.ts',
        find: '  const slots = range(limit + 1);',
        replace: '  limit = limit + 1;\n  const slots = range(limit + 1);',
      },
    ],
    nemeses: ['none', 'none'],
    cycles: 6,
    loops: 'slots',
    expect: ['capacity'],
  },
  {
    // A writer's grant leaves the last reader slot out: a reader there holds beside the writer, and
    // no slot has two holders.
    name: 'writer-skips-slot',
    description: 'a writer takes every reader slot but the last',
    patches: [
      {
        file: 'rwlock.ts',
        find: 'this.slots = Object.freeze(range(rw.maxReaders));',
        replace: 'this.slots = Object.freeze(range(rw.maxReaders - 1));',
      },
      {
        file: 'rwlock.ts',
        find: 'this.resources = Object.freeze(rw.names.slice(0, rw.maxReaders));',
        replace: 'this.resources = Object.freeze(rw.names.slice(0, rw.maxReaders - 1));',
      },
      {
        file: 'rwlock.ts',
        find: 'lockKeys: rw.keys.slice(0, rw.maxReaders) };',
        replace: 'lockKeys: rw.keys.slice(0, rw.maxReaders - 1) };',
      },
    ],
    nemeses: ['none', 'none'],
    cycles: 4,
    loops: 'slots',
    expect: ['rw-exclusion'],
  },
  {
    name: 'quorum-floor-slots',
    description: 'quorum ⌊N/2⌋ instead of ⌊N/2⌋+1, against the semaphores and read-write locks',
    patches: [QUORUM_FLOOR],
    nemeses: ['ring-partition', 'ring-partition'],
    cycles: 4,
    loops: 'slots',
    expect: SLOT_SAFETY,
  },
  {
    name: 'no-cleanup-slots',
    description: "a failed attempt does not release its partial keys, against the semaphores' and read-write locks' slots",
    patches: [NO_CLEANUP],
    // While a majority is blackholed every attempt is refused for unavailability with its keys on
    // the two nodes that voted for it, which no cleanup takes back (a split vote without faults is rare).
    nemeses: ['blackhole-majority', 'blackhole-majority'],
    cycles: 5,
    loops: 'slots',
    expect: ['slot-hygiene'],
  },
];

/** Apply `patch` to `source`, or throw if its target is not there exactly `count` times. */
export function applyPatch(source: string, patch: SourcePatch, mutant: string): string {
  const expected = patch.count ?? 1;
  const found = source.split(patch.find).length - 1;
  if (found !== expected) {
    throw new Error(
      `mutant ${mutant}: expected ${expected} occurrence(s) of ${JSON.stringify(patch.find)} in packages/redlock/src/${patch.file}, ` +
        `found ${found}: the core changed, update the mutant in chaos/harness/mutants.ts`,
    );
  }
  return source.split(patch.find).join(patch.replace);
}
