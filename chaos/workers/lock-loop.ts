/**
 * One lock loop of a chaos client process: acquire a resource from a small set → write to the
 * register with the lock's fence → hold (short, long with extensions, or abandoned at the end of
 * its validity) → write again → release. Every step is logged with its CLOCK_MONOTONIC time.
 */
import { ATTEMPT_FIELD, encodeVotes, NS_PER_MS, nowNs, type ClientEvent } from '../harness/history';
import type { EventLog } from '../harness/event-log';
import { Rng } from '../harness/random';
import type { RegisterClient } from '../harness/register-client';
import type { ClientToRunner, LoopConfig } from '../harness/worker-protocol';
import type { Lock, Redlock } from '@redlock-console/redlock';
import { cleanupPendingOf, type LeftoverReader } from './leftovers';

export interface LoopContext {
  client: number;
  origin: bigint;
  config: LoopConfig;
  redlock: Redlock;
  register: RegisterClient;
  /** Reads what a rejected acquire left on the nodes that answered it. */
  leftovers: LeftoverReader;
  /** When the core decided the last grant of each resource (client.ts), taken at acquire-ok. */
  decisions: Map<string, number>;
  log: EventLog;
  counters: { ok: number; failed: number };
  stopped(): boolean;
  /**
   * The self-stop of the client-pause nemesis, if one is armed: a function to call right after an
   * acquire has been started, which then SIGSTOPs the process in the middle of that acquire.
   */
  takeSelfStop(): (() => void) | null;
  send(msg: ClientToRunner): void;
}

export function errorClass(err: unknown): string {
  return err instanceof Error ? err.name : 'Error';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => (ms <= 0 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}

export async function runLockLoop(ctx: LoopContext, loop: number, long: boolean): Promise<void> {
  const { config, client, origin, log } = ctx;
  const rng = new Rng(config.seed + loop * 7_919);
  const resources = long ? config.longResources : config.resources;
  const deadline = performance.now() + config.maxMs;
  const now = () => nowNs(origin);
  let seq = 0;
  // Releases answer at a quorum (packages/redlock/src/release-round.ts) and the loop goes on at
  // once, as a caller would; each one's final votes (every node answered: what the checker judges)
  // are logged when they settle, all before the loop returns.
  const settling = new Set<Promise<void>>();
  while (!ctx.stopped() && performance.now() < deadline) {
    // A pause in the middle of an acquire is aimed at a resource of this client's own, so that the
    // nodes grant it while the process is stopped (a contended attempt would prove nothing).
    const selfStop = ctx.takeSelfStop();
    const resource = selfStop ? `${config.fenced ? 'f' : 'u'}:solo${client}` : rng.pick(resources);
    const lockId = `${config.phase}.${client}.${loop}.${seq++}`;
    log.push({ e: 'acquire-invoke', lock: lockId, client, resource, fenced: config.fenced, t: now() });
    let lock: Lock;
    try {
      const pending = ctx.redlock.acquire(resource, config.ttlMs, {
        fenced: config.fenced,
        retryCount: config.settings.retryCount,
        retryDelayMs: config.settings.retryDelayMs,
        retryJitterMs: config.settings.retryJitterMs,
        metadata: { [ATTEMPT_FIELD]: lockId },
      });
      selfStop?.();
      lock = await pending;
    } catch (err) {
      log.push(await failure(ctx, lockId, resource, err, now()));
      ctx.counters.failed++;
      await sleep(rng.between(1, 5));
      continue;
    }
    const ok = now();
    const validityAtReturnMs = lock.expiresAt - Date.now();
    const decided = ctx.decisions.get(resource);
    ctx.decisions.delete(resource);
    // The validity left, read before the clock: the end computed is never before the core's own
    // (a preemption in between only moves it later), so a late extend is never flagged wrongly.
    const validityEnd = () => {
      const left = lock.validityMs;
      return now() + left * NS_PER_MS;
    };
    let validUntil = validityEnd();
    log.push({
      e: 'acquire-ok',
      lock: lockId,
      t: ok,
      validUntil,
      fence: lock.fence,
      votes: encodeVotes(lock.votes),
      validityAtReturnMs,
      ...(decided === undefined ? {} : { decided }),
    });
    ctx.counters.ok++;
    if (config.reportHolds) ctx.send({ type: 'hold', lock: lockId, resource, until: validUntil });

    await write(ctx, resource, lock, lockId);
    const { abandonShare, extendShare, shortMaxMs, longTtls, hotAbandonShare, lateExtendShare } = config.holds;
    // Hot loops: short holds, or (hotAbandonShare) an abandoned one; long loops: the whole mix.
    const kind = long ? rng.next() : rng.next() < hotAbandonShare ? 0 : 1;
    if (kind < abandonShare) {
      // Walk away: keep the lock to the end of its validity, never release it.
      await sleep((validUntil - now()) / NS_PER_MS);
      if (config.reportHolds) ctx.send({ type: 'unhold', lock: lockId });
      continue;
    }
    let lost = false;
    if (kind < abandonShare + extendShare) {
      const end = performance.now() + longTtls * config.ttlMs;
      while (performance.now() < end && !lost) {
        await sleep(Math.min(end - performance.now(), lock.validityMs - config.ttlMs / 2));
        if (performance.now() >= end) break;
        log.push({ e: 'extend-invoke', lock: lockId, t: now() });
        try {
          await lock.extend(config.ttlMs);
          validUntil = validityEnd();
          log.push({ e: 'extend-ok', lock: lockId, t: now(), validUntil });
          if (config.reportHolds) ctx.send({ type: 'hold', lock: lockId, resource, until: validUntil });
        } catch (err) {
          // The lock may be lost: stop using it (the old validity still bounds the hold).
          log.push({ e: 'extend-fail', lock: lockId, t: now(), error: errorClass(err) });
          lost = true;
        }
      }
    } else if (kind < abandonShare + extendShare + lateExtendShare) {
      // One extend right around the end of the validity: from a twentieth of the ttl before it to a
      // fifth after (inside the keys' ttl, which outlives the validity by the drift allowance). The
      // core must refuse every one made after the end.
      const aim = (validUntil - now()) / NS_PER_MS + rng.between(-config.ttlMs / 20, config.ttlMs / 5);
      await sleep(Math.max(0, aim));
      log.push({ e: 'extend-invoke', lock: lockId, t: now() });
      try {
        await lock.extend(config.ttlMs);
        validUntil = validityEnd();
        log.push({ e: 'extend-ok', lock: lockId, t: now(), validUntil });
      } catch (err) {
        log.push({ e: 'extend-fail', lock: lockId, t: now(), error: errorClass(err) });
        lost = true;
      }
    } else {
      await sleep(rng.between(0, shortMaxMs));
    }
    // A client does not notice its own pauses: it writes again without looking at the clock.
    if (!lost) await write(ctx, resource, lock, lockId);
    log.push({ e: 'release-invoke', lock: lockId, t: now() });
    const released = await lock.release();
    // A core of an older build (the reference report) answers with its final result.
    const logged = Promise.resolve(released.settled ?? released).then((final) => {
      log.push({ e: 'release-ok', lock: lockId, t: now(), votes: encodeVotes(final.votes) });
      settling.delete(logged);
    });
    settling.add(logged);
    if (config.reportHolds) ctx.send({ type: 'unhold', lock: lockId });
  }
  await Promise.all([...settling]);
}

/** Write to the register with the lock's fence (none for unfenced locks); logged either way. */
export async function write(
  ctx: Pick<LoopContext, 'register' | 'log' | 'origin'>,
  resource: string,
  lock: Lock,
  lockId: string,
): Promise<boolean> {
  const t = nowNs(ctx.origin);
  const accepted = await ctx.register.write({ resource, fence: lock.fence, lock: lockId });
  ctx.log.push({ e: 'write', lock: lockId, t, done: nowNs(ctx.origin), fence: lock.fence, accepted });
  return accepted;
}

/**
 * The log event of a rejected acquire, with what it left on the nodes that answered it, read at
 * once (see leftovers.ts). `t` is the rejection's time, taken before the read.
 */
export async function failure(
  ctx: Pick<LoopContext, 'redlock' | 'leftovers'>,
  lockId: string,
  resource: string,
  err: unknown,
  t: number,
): Promise<Extract<ClientEvent, { e: 'acquire-fail' }>> {
  const pending = cleanupPendingOf(err);
  if (pending === null) return { e: 'acquire-fail', lock: lockId, t, error: errorClass(err) };
  const read = await ctx.leftovers.check(ctx.redlock.lockKey(resource), lockId, pending);
  return {
    e: 'acquire-fail',
    lock: lockId,
    t,
    error: errorClass(err),
    leftovers: read.leftovers,
    unread: read.unread,
    pending: [...pending],
  };
}
