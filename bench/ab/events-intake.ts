/**
 * What reading the masters' keyspace notifications costs the console (the live events' intake), A/B: `npm run bench:intake -- [--a set,expire,del,expired] [--b set,del,expired]
 * [--phases 6] [--ms 4000] [--pause 9]`. Each variant is a set of keyevent channels; a reader
 * process (events-intake-reader.ts) subscribes to them on five fresh masters while the lock core
 * runs fenced acquire + release, 32 in flight, each loop pausing `--pause` ms between pairs (9 ms
 * gives about the HTTP lock service's rate; 0 runs flat out, where replies and notifications
 * arrive batched). Phases alternate A and B, the order flipped every round. Reported per pair:
 * the reader's CPU, the masters' CPU (INFO cpu) and the notifications read; medians over the
 * phases. docs/benchmarks.md, session 35, has what it showed: the intake's cost is socket
 * wake-ups, not messages.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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
if (!Number.isInteger(phases) || phases < 1) throw new Error(`--phases takes a whole number ≥ 1; got "${values.phases}"`);
if (!Number.isInteger(phaseMs) || phaseMs < 500) throw new Error(`--ms takes a whole number of ms ≥ 500; got "${values.ms}"`);
if (!Number.isInteger(pauseMs) || pauseMs < 0) throw new Error(`--pause takes a whole number of ms ≥ 0; got "${values.pause}"`);
/** The keyevents the lock core causes on its keys (notify-keyspace-events Eg$x publishes them all). */
const KEYEVENTS = new Set(['set', 'setrange', 'expire', 'del', 'expired', 'evicted']);
/** A variant: `event,event,…`. */
function parseVariant(variant: string): string {
  const match = /^([a-z,]+)$/.exec(variant);
  const events = match?.[1]?.split(',') ?? [];
  if (!match || events.length === 0 || events.some((e) => !KEYEVENTS.has(e)))
    throw new Error(`a variant is keyevents among ${[...KEYEVENTS].join(', ')}, comma-separated; got "${variant}"`);
  return events.join(',');
}
const variants = { a: parseVariant(values.a), b: parseVariant(values.b) };

interface Reading {
  reader: number;
  masters: number;
  notifications: number;
  pairsPerS: number;
}

const cluster = await BenchCluster.start(join(tmpdir(), 'redlock-intake'));
// Quit in the finally below, also after a failure: its connections would otherwise retry the
// stopped masters for ever and keep the process from exiting.
const core = new Redlock(cluster.urls, { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS, retryCount: 0 });
try {
  await Promise.all(cluster.admin.map((c) => c.config('SET', 'notify-keyspace-events', 'Eg$x')));
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
  const phase = async (events: string): Promise<Reading> => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'events-intake-reader.ts'), cluster.urls.join(','), events, lockKeyPrefix(OUR_PREFIX)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    /** The reader's next line; it must start with `expected` (its errors and an early exit end the run). */
    const expect = async (expected: string) => {
      const { value, done } = await lines.next();
      const line = done ? '(the reader exited)' : String(value);
      if (!line.startsWith(expected)) throw new Error(`the reader said ${line}, not ${expected}`);
      return line;
    };
    try {
      await expect('ready');
      await loop(500);
      child.stdin.write('mark\n');
      await expect('marked');
      const cpu0 = await mastersCpu();
      const started = performance.now();
      const pairs = await loop(phaseMs);
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = await mastersCpu();
      child.stdin.write('report\n');
      const { cpuUs, messages } = JSON.parse(await expect('{')) as { cpuUs: number; messages: number };
      return { reader: cpuUs / pairs, masters: ((cpu1 - cpu0) * 1e6) / pairs, notifications: messages / pairs, pairsPerS: pairs / seconds };
    } finally {
      child.stdin.end();
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
  };
  const readings: Record<'a' | 'b', Reading[]> = { a: [], b: [] };
  for (let round = 0; round < phases; round++) {
    for (const side of round % 2 ? (['b', 'a'] as const) : (['a', 'b'] as const)) readings[side].push(await phase(variants[side]));
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  for (const side of ['a', 'b'] as const) {
    const r = readings[side];
    console.log(
      `${side.toUpperCase()} ${values[side]}: reader ${median(r.map((x) => x.reader)).toFixed(1)} µs/pair [${r.map((x) => x.reader.toFixed(0)).join(' ')}], ` +
        `masters ${median(r.map((x) => x.masters)).toFixed(1)} µs/pair, ${median(r.map((x) => x.notifications)).toFixed(2)} notifications/pair, ${median(r.map((x) => x.pairsPerS)).toFixed(0)} pairs/s`,
    );
  }
} finally {
  await core.quit();
  await cluster.stop();
}
