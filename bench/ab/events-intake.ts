/**
 * What reading the masters' keyspace notifications costs the console (the live events' intake,
 * issue 18), A/B: `npm run bench:intake -- [--a set,expire,del,expired] [--b set,del,expired@10]
 * [--phases 6] [--ms 4000] [--pause 9]`. Each variant is a set of keyevent channels, optionally
 * `@N` to read the sockets every N ms; a reader process (events-intake-reader.ts) subscribes to
 * them on five fresh masters while the lock core runs fenced acquire + release, 32 in flight,
 * each loop pausing `--pause` ms between pairs (9 ms gives about the HTTP lock service's rate; 0
 * runs flat out, where replies and notifications arrive batched). Phases alternate A and B, the
 * order flipped every round. Reported per pair: the reader's CPU, the masters' CPU (INFO cpu) and
 * the notifications read; medians over the phases. docs/benchmarks.md, session 35, has what it
 * showed: the intake's cost is socket wake-ups, not messages.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Redlock, lockKeyPrefix } from '@redlock-console/redlock';
import { BenchCluster, MAX_TTL_MS, OUR_PREFIX } from '../harness/cluster';

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: 'set,expire,del,expired' },
    b: { type: 'string', default: 'set,del,expired' },
    phases: { type: 'string', default: '6' },
    ms: { type: 'string', default: '4000' },
    pause: { type: 'string', default: '9' },
  },
});
const phases = Number(values.phases);
const phaseMs = Number(values.ms);
const pauseMs = Number(values.pause);
if (![phases, phaseMs, pauseMs].every((n) => Number.isFinite(n) && n >= 0)) throw new Error('--phases, --ms and --pause take numbers');

interface Reading {
  reader: number;
  masters: number;
  notifications: number;
  pairsPerS: number;
}

const cluster = await BenchCluster.start(join(tmpdir(), 'redlock-intake'));
try {
  await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', 'Eg$x')));
  const core = new Redlock(cluster.urls, { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS, retryCount: 0 });
  const mastersCpu = async () => {
    const infos = await Promise.all(cluster.admin.map((c) => c.info('cpu')));
    return infos.reduce(
      (sum, info) => sum + Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]),
      0,
    );
  };
  let n = 0;
  const loop = async (ms: number) => {
    let pairs = 0;
    const end = performance.now() + ms;
    await Promise.all(
      Array.from({ length: 32 }, async (_, worker) => {
        while (performance.now() < end) {
          const lock = await core.acquire(`intake-${worker}-${n++ % 8}`, 5_000);
          await lock.release();
          pairs++;
          if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      }),
    );
    return pairs;
  };
  const phase = async (variant: string): Promise<Reading> => {
    const [events = '', readMs = '0'] = variant.split('@');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'events-intake-reader.ts'), cluster.urls.join(','), events, lockKeyPrefix(OUR_PREFIX)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, READ_MS: readMs },
      },
    );
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => String((await lines.next()).value);
    await next(); // ready
    await loop(500);
    child.stdin.write('mark\n');
    const cpu0 = await mastersCpu();
    const pairs = await loop(phaseMs);
    const cpu1 = await mastersCpu();
    child.stdin.write('report\n');
    const { cpuUs, messages } = JSON.parse(await next()) as { cpuUs: number; messages: number };
    child.stdin.end();
    return {
      reader: cpuUs / pairs,
      masters: ((cpu1 - cpu0) * 1e6) / pairs,
      notifications: messages / pairs,
      pairsPerS: pairs / (phaseMs / 1000),
    };
  };
  const readings: Record<'a' | 'b', Reading[]> = { a: [], b: [] };
  for (let round = 0; round < phases; round++) {
    for (const side of round % 2 ? (['b', 'a'] as const) : (['a', 'b'] as const)) readings[side].push(await phase(values[side]));
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1] ?? NaN;
  for (const side of ['a', 'b'] as const) {
    const r = readings[side];
    console.log(
      `${side.toUpperCase()} ${values[side]}: reader ${median(r.map((x) => x.reader)).toFixed(1)} µs/pair [${r.map((x) => x.reader.toFixed(0)).join(' ')}], ` +
        `masters ${median(r.map((x) => x.masters)).toFixed(1)} µs/pair, ${median(r.map((x) => x.notifications)).toFixed(2)} notifications/pair, ${median(r.map((x) => x.pairsPerS)).toFixed(0)} pairs/s`,
    );
  }
  await core.quit();
} finally {
  await cluster.stop();
}
