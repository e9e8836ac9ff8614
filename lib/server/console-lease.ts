import 'server-only';
import { randomUUID } from 'node:crypto';
import { quorumSize } from '@redlock-console/redlock';
import { runScript, script } from './auth/redis-script';
import { consoleKeys } from './console-keys';
import { instanceName } from './instance';
import { logger } from './logger';
import { onEveryMaster, readMajority } from './masters';

export type LeaseName = 'scenario-run' | 'sandbox-supervisor';

/** Who holds a lease: the console process (REDLOCK_INSTANCE), what for, since when. */
export interface LeaseHolder {
  instance: string;
  what: string;
  since: number;
}

export interface HeldLease {
  /** Give it up now (the other replicas may take it at once). */
  release(): Promise<void>;
}

/** How long a lease lives without a renewal (a console that dies frees it after this), and how often it is renewed. */
export const LEASE_TTL_MS = 15_000;
export const LEASE_RENEW_MS = 5_000;

/**
 * A lease among the console processes on one set of masters: at most one of them runs a scenario,
 * at most one drives the teaching sandbox's supervisor. Taken with a script on every master (set
 * when free or already ours, else refused with the holder), held when a majority took it; a
 * minority that took it gives it back. Two takers cannot both reach a majority: each master holds
 * one owner at a time, and two majorities share a master. It is renewed every LEASE_RENEW_MS while
 * held and ends LEASE_TTL_MS after the last renewal a majority took: a renewal that fails says so
 * through `onLost` (the holder stops what the lease guarded, e.g. cancels its run). This is the
 * console's coordination, not the lock service's safety: no fence, and a paused console may
 * overlap the next holder by at most its pause past the TTL.
 */
export async function takeLease(
  name: LeaseName,
  what: string,
  onLost: (why: string) => void = () => undefined,
): Promise<{ held: HeldLease } | { holder: LeaseHolder | null }> {
  const key = consoleKeys().lease(name);
  const token = randomUUID();
  const value = JSON.stringify({ token, instance: instanceName(), what, since: Date.now() } satisfies LeaseHolder & { token: string });
  const taken = await takeOnMasters(key, token, value);
  if (!taken.majority) {
    void giveBack(key, token);
    return { holder: taken.holder };
  }
  let ended = false;
  const timer = setInterval(() => {
    void takeOnMasters(key, token, value).then((again) => {
      if (ended || again.majority) return;
      ended = true;
      clearInterval(timer);
      void giveBack(key, token);
      const why = again.holder
        ? `console ${again.holder.instance} took the ${name} lease (${again.holder.what})`
        : `the masters did not renew the ${name} lease`;
      logger().warn({ lease: name, why }, 'lease lost');
      onLost(why);
    });
  }, LEASE_RENEW_MS);
  timer.unref();
  return {
    held: {
      async release() {
        if (ended) return;
        ended = true;
        clearInterval(timer);
        await giveBack(key, token);
      },
    },
  };
}

/** Who holds `name` now, as a majority of the masters say (null: nobody, or no majority answered). */
export async function leaseHolder(name: LeaseName): Promise<LeaseHolder | null> {
  const key = consoleKeys().lease(name);
  const { answers } = await readMajority((c) => c.get(key));
  return mostNamed(answers);
}

async function takeOnMasters(key: string, token: string, value: string): Promise<{ majority: boolean; holder: LeaseHolder | null }> {
  const results = await onEveryMaster((c) => runScript(c, TAKE, [key], [token, value, String(LEASE_TTL_MS)]) as Promise<[number, string]>);
  let took = 0;
  const others: string[] = [];
  for (const r of results) {
    if (r.status !== 'fulfilled') continue;
    if (r.value[0] === 1) took++;
    else others.push(r.value[1]);
  }
  return { majority: took >= quorumSize(results.length), holder: mostNamed(others) };
}

async function giveBack(key: string, token: string): Promise<void> {
  await onEveryMaster((c) => runScript(c, GIVE_BACK, [key], [token]));
}

/** The holder most masters name (a lease half taken by two shows the more common one). */
function mostNamed(values: readonly (string | null)[]): LeaseHolder | null {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!best) return null;
  try {
    const { instance, what, since } = JSON.parse(best) as LeaseHolder;
    return { instance: String(instance), what: String(what), since: Number(since) };
  } catch {
    return null;
  }
}

/** KEYS[1] = the lease; ARGV = token, value (JSON with the token), TTL ms. Takes or renews it: {1} or {0, the holder's value}. */
const TAKE = script(`
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).token ~= ARGV[1] then return {0, v} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return {1, ''}
`);

/** KEYS[1] = the lease; ARGV[1] = token. Deletes it only if it is still this token's. */
const GIVE_BACK = script(`
local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).token == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`);
