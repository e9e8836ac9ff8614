import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import NodeRedlock from 'redlock';
import { epochKey, lockKey, lockValue, releaseChannel, resolveSettings } from '@redlock-console/redlock';
import { prepareAcquire } from '@redlock-console/redlock/internals';
import { PROBE_FIELDS, probeScript } from '@redlock-console/redlock/internals';
import { ACQUIRE_SCRIPT, FENCE_SCRIPT, RELEASE_SCRIPT } from '@redlock-console/redlock/internals';
import { MAX_TTL_MS, OUR_PREFIX } from '../harness/cluster';
import { row, type Row } from '../harness/report';
import { figure } from '../harness/stats';

const CALLS = 5_000;
const REPS = 5;
const TTL_MS = 10_000;
const TOKEN = 'bench-token-0123456789abcde';
const RAW_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

type Call = (i: number) => (string | number)[][];

async function cpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
}

/** Redis CPU per call (µs; a call may be several commands): CALLS calls pipelined 500 at a time, INFO cpu before and after. */
async function perCall(client: Redis, call: Call): Promise<number> {
  const before = await cpuSeconds(client);
  for (let start = 0; start < CALLS; start += 500) {
    const pipeline = client.pipeline();
    for (let i = start; i < start + 500; i++) {
      for (const [command, ...args] of call(i)) pipeline.call(String(command), ...args);
    }
    const replies = await pipeline.exec();
    const failed = replies?.find(([err]) => err);
    if (failed) throw failed[0]!;
  }
  return (((await cpuSeconds(client)) - before) * 1e6) / CALLS;
}

function sha(source: string): string {
  return createHash('sha1').update(source).digest('hex');
}

/**
 * What each Lua script (and the raw commands) costs the Redis server per call, measured alone on
 * one node: the reason behind the throughput figures when the servers and the client share cores.
 * Our grant is the batch the lock core sends for one resource (packages/redlock/src/grant.ts): SET NX GET of
 * the lock key's value (`<token> <metadata>`, packages/redlock/src/value.ts, with the metadata
 * prepareAcquire builds) and the epoch read; the acquire script (several resources) is priced on
 * one resource for comparison.
 */
export async function scriptCosts(client: Redis): Promise<Row[]> {
  let nrAcquire = '';
  let nrRelease = '';
  new NodeRedlock([client], {}, { acquireScript: (s) => (nrAcquire = s), releaseScript: (s) => (nrRelease = s) });
  for (const source of [ACQUIRE_SCRIPT.source, FENCE_SCRIPT.source, RELEASE_SCRIPT.source, nrAcquire, nrRelease, RAW_RELEASE]) {
    await client.script('LOAD', source);
  }
  const settings = resolveSettings({ keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS });
  const req = prepareAcquire(settings, 'cost', TTL_MS, { fenced: false });
  const metaHead = `${req.metaHead},"acquiredAt":"${Date.now()}"`;
  const value = lockValue(TOKEN, `${metaHead}}`);
  const lock = (resource: string) => lockKey(OUR_PREFIX, resource);
  // The fast probe read after the grant (packages/redlock/src/grant-group.ts: one transaction of SCRIPT
  // EXISTS and HMGET). Its script is loaded here by hand, which only a measurement may do (the
  // lock core loads it by a check alone), so that the proof answers 1 as on a checked node.
  const probe = probeScript(epochKey(OUR_PREFIX), '2', MAX_TTL_MS);
  await client.script('LOAD', probe.source);
  const grant = (resource: string) => [
    ['SET', lock(resource), value, 'NX', 'GET', 'PX', TTL_MS],
    ['MULTI'],
    ['SCRIPT', 'EXISTS', probe.sha],
    ['HMGET', epochKey(OUR_PREFIX), ...PROBE_FIELDS],
    ['EXEC'],
  ];
  const release = (resource: string, channel: string) => [['EVALSHA', RELEASE_SCRIPT.sha, 1, lock(resource), TOKEN, channel, resource]];

  const names = [
    'ours: grant, one resource (SET NX GET of token + metadata, then the probe transaction), as sent',
    'ours: acquire script (several resources; priced on one)',
    'ours: fence confirmation (fenced: true only)',
    'ours: release (compare-and-delete + PUBLISH)',
    'ours: release without the PUBLISH',
    'node-redlock: acquire script',
    'node-redlock: release script',
    'raw: SET NX PX',
    'raw: compare-and-delete script',
  ];
  const costs = names.map(() => [] as number[]);
  for (let rep = 0; rep < REPS; rep++) {
    const r = (tag: string) => (i: number) => `cost-${rep}-${tag}-${i}`;
    const a = r('a');
    const b = r('b');
    const c = r('c');
    costs[0]!.push(await perCall(client, (i) => grant(a(i))));
    costs[2]!.push(
      await perCall(client, (i) => [
        ['EVALSHA', FENCE_SCRIPT.sha, 2, epochKey(OUR_PREFIX), lock(a(i)), TOKEN, 1, `${metaHead},"fence":"1"}`],
      ]),
    );
    costs[3]!.push(await perCall(client, (i) => release(a(i), releaseChannel(OUR_PREFIX))));
    costs[1]!.push(await perCall(client, (i) => [['EVALSHA', ACQUIRE_SCRIPT.sha, 1, lock(b(i)), value, TTL_MS]]));
    costs[4]!.push(await perCall(client, (i) => release(b(i), '')));
    costs[5]!.push(await perCall(client, (i) => [['EVALSHA', sha(nrAcquire), 1, `nr:${c(i)}`, TOKEN, TTL_MS]]));
    costs[6]!.push(await perCall(client, (i) => [['EVALSHA', sha(nrRelease), 1, `nr:${c(i)}`, TOKEN]]));
    costs[7]!.push(await perCall(client, (i) => [['SET', `raw:${c(i)}`, TOKEN, 'NX', 'PX', TTL_MS]]));
    costs[8]!.push(await perCall(client, (i) => [['EVALSHA', sha(RAW_RELEASE), 1, `raw:${c(i)}`, TOKEN]]));
  }
  return names.map((name, i) => row(name, 'µs/call', figure(costs[i]!)));
}
