/**
 * The slot loops of a chaos client process: semaphore permits and read-write locks, taken under the
 * phase's nemesis beside the lock loops, with the same settings and paths to the nodes. An
 * iteration: take 1 or 2 permits of a semaphore, or a read lock, or a write lock → write to the
 * register once per slot held, with the grant's fence (a fenced store keeps one mark per slot:
 * docs/semaphores.md) → hold (short, extended, or kept to the end of its validity and walked away
 * from) → write again → release. Every step is logged with its CLOCK_MONOTONIC time, as the lock
 * loops log theirs, so the slot checkers (chaos/harness/check-slots.ts) see each holder's validity.
 */
import type { Lock, Redlock } from '@redlock-console/redlock';
import type { EventLog } from '../harness/event-log';
import { ATTEMPT_FIELD, encodeVotes, NS_PER_MS, nowNs, type ClientEvent, type SlotKind } from '../harness/history';
import { Rng } from '../harness/random';
import type { RegisterClient } from '../harness/register-client';
import { slotRegister } from '../harness/slot-names';
import type { LoopConfig } from '../harness/worker-protocol';
import { cleanupPendingOf, type LeftoverReader } from './leftovers';
import { errorClass, sleep, type LoopContext } from './lock-loop';

/** A slot acquire: what to take, and how (the loop's or a scripted step's choice). */
export interface SlotRequest {
  kind: SlotKind;
  name: string;
  /** The semaphore's limit, or the read-write lock's maxReaders. */
  limit: number;
  permits: number;
  ttlMs: number;
  fenced: boolean;
  retryCount: number;
  retryDelayMs: number;
  retryJitterMs: number;
}

/** What logging a slot acquire needs of its process. */
export interface SlotLogContext {
  client: number;
  origin: bigint;
  redlock: Redlock;
  leftovers: LeftoverReader;
  keyPrefix: string;
  decisions: Map<string, number>;
  log: EventLog;
}

/** A granted slot acquire: the lock (a Permit or an RwLock) and its slots. */
export interface SlotHeld {
  lock: Lock;
  id: string;
  slots: readonly number[];
  validUntil: number;
}

/** Acquire `req` and log it (invoke, then ok with the slots, or fail with its leftovers); null when refused. */
export async function acquireSlots(ctx: SlotLogContext, req: SlotRequest, id: string): Promise<SlotHeld | null> {
  const now = () => nowNs(ctx.origin);
  const { kind, name, limit, permits, fenced } = req;
  ctx.log.push({ e: 'slot-acquire-invoke', lock: id, client: ctx.client, kind, name, limit, permits, fenced, t: now() });
  const options = {
    fenced,
    retryCount: req.retryCount,
    retryDelayMs: req.retryDelayMs,
    retryJitterMs: req.retryJitterMs,
    metadata: { [ATTEMPT_FIELD]: id },
  };
  let lock: Lock & { slots: readonly number[] };
  try {
    const pending =
      kind === 'sem'
        ? ctx.redlock.acquireSemaphore(name, limit, req.ttlMs, { ...options, permits })
        : kind === 'read'
          ? ctx.redlock.acquireRead(name, req.ttlMs, { ...options, maxReaders: limit })
          : ctx.redlock.acquireWrite(name, req.ttlMs, { ...options, maxReaders: limit });
    lock = await pending;
  } catch (err) {
    ctx.log.push(await slotFailure(ctx, id, err, now()));
    return null;
  }
  const ok = now();
  const validityAtReturnMs = lock.expiresAt - Date.now();
  const decisionKey = lock.resources.join('\n');
  const decided = ctx.decisions.get(decisionKey);
  ctx.decisions.delete(decisionKey);
  // The validity left, read before the clock (as lock-loop.ts): never an end before the core's.
  const left = lock.validityMs;
  const validUntil = now() + left * NS_PER_MS;
  ctx.log.push({
    e: 'acquire-ok',
    lock: id,
    t: ok,
    validUntil,
    fence: lock.fence,
    votes: encodeVotes(lock.votes),
    validityAtReturnMs,
    slots: [...lock.slots],
    ...(decided === undefined ? {} : { decided }),
  });
  return { lock, id, slots: lock.slots, validUntil };
}

/**
 * The log event of a rejected slot acquire, with the keys its last attempt asked for (the error's
 * `resources`) read at once on every node not in its `cleanupPending`. That is every node where no
 * attempt of the acquire may have left a key (the core's retry loop, acquire-loop.ts, names the
 * nodes of every attempt), so a key with this acquire's id there is a leftover whichever attempt
 * wrote it.
 */
async function slotFailure(ctx: SlotLogContext, id: string, err: unknown, t: number): Promise<Extract<ClientEvent, { e: 'acquire-fail' }>> {
  const pending = cleanupPendingOf(err);
  const names = (err as { resources?: unknown } | null)?.resources;
  if (pending === null || !Array.isArray(names)) return { e: 'acquire-fail', lock: id, t, error: errorClass(err) };
  const leftovers = new Set<number>();
  let unread = 0;
  for (const slotName of names as string[]) {
    const read = await ctx.leftovers.check(ctx.keyPrefix + slotName, id, pending);
    for (const n of read.leftovers) leftovers.add(n);
    unread += read.unread;
  }
  return {
    e: 'acquire-fail',
    lock: id,
    t,
    error: errorClass(err),
    leftovers: [...leftovers].sort((a, b) => a - b),
    unread,
    pending: [...pending],
  };
}

/** One write per slot held, each to that slot's register with the grant's fence. */
export async function writeSlots(ctx: { register: RegisterClient; log: EventLog; origin: bigint }, held: SlotHeld, req: SlotRequest) {
  for (const slot of held.slots) {
    const t = nowNs(ctx.origin);
    const lock = `${held.id}@${slot}`;
    const accepted = await ctx.register.write({
      resource: slotRegister(req.fenced, req.kind, req.name, slot),
      fence: held.lock.fence,
      lock,
    });
    ctx.log.push({ e: 'write', lock, t, done: nowNs(ctx.origin), fence: held.lock.fence, accepted });
  }
}

/** Release and log the final votes (every node answered), as lock-loop.ts does. */
export async function releaseSlots(ctx: { log: EventLog; origin: bigint }, held: SlotHeld): Promise<string> {
  ctx.log.push({ e: 'release-invoke', lock: held.id, t: nowNs(ctx.origin) });
  const answered = await held.lock.release();
  const final = await (answered.settled ?? answered);
  const votes = encodeVotes(final.votes);
  ctx.log.push({ e: 'release-ok', lock: held.id, t: nowNs(ctx.origin), votes });
  return votes;
}

/** The next thing a loop takes: a semaphore's permits (1, or 2 at once), a read lock or a write lock. */
function nextRequest(config: LoopConfig, rng: Rng): SlotRequest {
  const { semaphores, rwlocks } = config.slotObjects;
  // A quarter of the acquires make one attempt (a try-lock): refusals, and their cleanup, under every nemesis.
  const once = rng.next() < 0.25;
  const base = { ...config.settings, ttlMs: config.ttlMs, fenced: config.fenced, ...(once ? { retryCount: 0 } : {}) };
  const roll = rng.next();
  if (roll < 0.45 || rwlocks.length === 0) {
    const sem = rng.pick(semaphores);
    return { ...base, kind: 'sem', name: sem.name, limit: sem.limit, permits: rng.next() < 0.3 ? 2 : 1 };
  }
  const rw = rng.pick(rwlocks);
  return { ...base, kind: roll < 0.82 ? 'read' : 'write', name: rw.name, limit: rw.maxReaders, permits: 1 };
}

export async function runSlotLoop(ctx: LoopContext, loop: number): Promise<void> {
  const { config, log, origin } = ctx;
  const rng = new Rng(config.seed + loop * 7_919);
  const deadline = performance.now() + config.maxMs;
  const logCtx: SlotLogContext = { ...ctx, keyPrefix: config.settings.keyPrefix };
  let seq = 0;
  while (!ctx.stopped() && performance.now() < deadline) {
    const req = nextRequest(config, rng);
    const id = `${config.phase}.${ctx.client}.${loop}.${seq++}`;
    // The pause-client nemesis's mid-acquire self-stops are left to the lock loops (aimed at a
    // resource of their own, so that the grant lands while the process is stopped).
    const held = await acquireSlots(logCtx, req, id);
    // Not counted in the process's progress: a phase's target is the lock loops' acquisitions.
    if (!held) {
      await sleep(rng.between(1, 5));
      continue;
    }
    const holdName = `${req.kind === 'sem' ? 'sem' : 'rw'}:${req.name}`;
    if (config.reportHolds) ctx.send({ type: 'hold', lock: id, resource: holdName, until: held.validUntil });
    await writeSlots(ctx, held, req);
    // Mostly short holds (the lock loops' hot mix); 5 % kept to the end of their validity, 5 %
    // extended once: a long hold stops every other holder of a full semaphore or of the writer's lock.
    const kind = rng.next();
    if (kind < 0.05) {
      // Walk away: keep the grant to the end of its validity, never release it.
      await sleep((held.validUntil - nowNs(origin)) / NS_PER_MS);
      if (config.reportHolds) ctx.send({ type: 'unhold', lock: id });
      continue;
    }
    let lost = false;
    if (kind < 0.1) lost = !(await extendOnce(ctx, held));
    else await sleep(rng.between(0, config.holds.shortMaxMs));
    // A client does not notice its own pauses: it writes again without looking at the clock.
    if (!lost) await writeSlots(ctx, held, req);
    await releaseSlots({ log, origin }, held);
    if (config.reportHolds) ctx.send({ type: 'unhold', lock: id });
  }
}

/** Hold past the first half of the validity, extend once, and hold a little longer; false when the extend failed. */
async function extendOnce(ctx: LoopContext, held: SlotHeld): Promise<boolean> {
  const { config, log, origin } = ctx;
  await sleep(held.lock.validityMs - config.ttlMs / 2);
  log.push({ e: 'extend-invoke', lock: held.id, t: nowNs(origin) });
  try {
    await held.lock.extend(config.ttlMs);
    const left = held.lock.validityMs;
    held.validUntil = nowNs(origin) + left * NS_PER_MS;
    log.push({ e: 'extend-ok', lock: held.id, t: nowNs(origin), validUntil: held.validUntil });
    await sleep(config.ttlMs / 4);
    return true;
  } catch (err) {
    log.push({ e: 'extend-fail', lock: held.id, t: nowNs(origin), error: errorClass(err) });
    return false;
  }
}
