import { describe, expect, it } from 'vitest';
import { epochKey, legacyFenceKey, markNodeClean, readFenceRegister, Redlock } from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// Survivors of the Lua mutants of probe.lua (scripts/mutation/lua-mutants.ts, docs/mutation.md),
// killed here on real redis-server: what a check (a client's first contact with a node) does
// with the node's fence register and its sentinel.
const env = redlockEnv();
const MAX_TTL = 2_000;

async function cleanPrefix(name: string): Promise<string> {
  const prefix = uniquePrefix(name);
  for (const d of env.direct) await markNodeClean(d, { keyPrefix: prefix, maxTtlMs: MAX_TTL });
  return prefix;
}

function client(prefix: string): Redlock {
  const r = new Redlock(env.cluster.urls, { keyPrefix: prefix, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 2_000 });
  env.redlocks.push(r);
  return r;
}

describe('probe.lua: the register a check reads and keeps', () => {
  it('an old-layout fence key below the hash register never lowers it: the next fence is above the hash register', async () => {
    const prefix = await cleanPrefix('probe-legacy-lower');
    const high = (await readFenceRegister(env.direct[0]!, prefix)) + 1_000_000;
    for (const d of env.direct) {
      await d.hset(epochKey(prefix), 'fence', String(high));
      await d.set(legacyFenceKey(prefix), '7'); // written by an old client, long ago
    }
    const lock = await client(prefix).acquire('r', 1_500);
    expect(lock.fence).toBeGreaterThan(high);
    await lock.release();
    // Every node's register stays at or above the hash's; the old key is kept in step.
    for (const d of env.direct) {
      expect(Number(await d.hget(epochKey(prefix), 'fence'))).toBeGreaterThanOrEqual(high);
    }
  });
});
