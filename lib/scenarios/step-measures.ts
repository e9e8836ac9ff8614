/**
 * The steps that measure and record a fact for the run's summary: what an acquire + release costs
 * each client (`measure-locks`), what fsync costs a node (`measure-fsync`), and whether one
 * client's fence came out above another's (`compare-fences`).
 */
import type { StepContext } from './context';
import type { StepOf } from './script';

/**
 * `count` acquire + release pairs by each client, taking turns (so a slow moment of the machine
 * falls on both), after one pair each to warm up. Not recorded as beliefs: each pair is one
 * client's, over before the next starts. Facts: the median and the range per client.
 */
export async function measureLocks(ctx: StepContext, step: StepOf<'measure-locks'>): Promise<string> {
  await Promise.all(step.who.map((who) => ctx.client(who).ready([1, 2, 3, 4, 5], 10_000, ctx.signal)));
  const times = new Map<string, number[]>(step.who.map((who) => [who, []]));
  const pair = async (who: string) => {
    const t0 = performance.now();
    const lock = await ctx.client(who).redlock.acquire(step.resource, step.ttlMs, { signal: ctx.signal, metadata: { client: who } });
    await lock.release();
    return performance.now() - t0;
  };
  for (const who of step.who) await pair(who);
  for (let i = 0; i < step.count; i++) for (const who of step.who) times.get(who)!.push(await pair(who));
  const ms = (x: number) => `${x < 10 ? x.toFixed(1) : x.toFixed(0)} ms`;
  const parts: string[] = [];
  for (const who of step.who) {
    const sorted = [...times.get(who)!].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const value = `${ms(median)} (${ms(sorted[0]!)}–${ms(sorted[sorted.length - 1]!)})`;
    const nodes = ctx.client(who).spec.nodes?.length ?? 5;
    ctx.record.fact(
      `${step.fact}-${who}`,
      `${who} (${nodes} node${nodes === 1 ? '' : 's'}): acquire + release, median of ${step.count}`,
      value,
    );
    parts.push(`${who}: ${value}`);
  }
  const text = `${step.count} acquire + release pairs each, median (range): ${parts.join(' · ')}`;
  ctx.record.say(ctx.now(), text, 'info');
  return text;
}

/**
 * Time `count` SETs one after another on the node with its fsync policy as it runs, then with
 * appendfsync everysec, which is put back at once (in `finally`). One key under the run's prefix,
 * deleted at the end. Round trips are sequential, so each write's time includes its round trip:
 * the difference between the two is the fsync.
 */
export async function measureFsync(ctx: StepContext, step: StepOf<'measure-fsync'>): Promise<string> {
  const id = step.nodes[0];
  const client = ctx.cluster.directClient(id);
  const key = `${ctx.prefix}fsync-probe`;
  const reply = (await client.config('GET', 'appendfsync')) as string[];
  const mode = reply[1] ?? 'always';
  const timeWrites = async () => {
    const t0 = performance.now();
    for (let i = 0; i < step.count; i++) await client.set(key, String(i), 'PX', 60_000);
    return (performance.now() - t0) / step.count;
  };
  let always: number;
  let everysec: number;
  try {
    always = await timeWrites();
    await client.config('SET', 'appendfsync', 'everysec');
    everysec = await timeWrites();
  } finally {
    await client.config('SET', 'appendfsync', mode).catch(() => undefined);
    await client.del(key).catch(() => undefined);
  }
  const ms = (x: number) => `${x < 1 ? x.toFixed(2) : x.toFixed(1)} ms`;
  const ratio = everysec > 0 ? always / everysec : 0;
  const value = `${ms(always)} vs ${ms(everysec)}${ratio >= 1.5 ? ` (×${ratio.toFixed(1)})` : ''}`;
  ctx.record.fact(step.fact, step.factLabel, value);
  const text = `node ${id}, ${step.count} writes each way: ${ms(always)} per write with appendfsync ${mode}, ${ms(everysec)} with everysec`;
  ctx.record.say(ctx.now(), text, 'info');
  return text;
}

/** Is `later`'s fence above `earlier`'s (their last grants on the resource)? Recorded as a fact. */
export function compareFences(ctx: StepContext, step: StepOf<'compare-fences'>): string {
  const fenceOf = (who: string) =>
    [...ctx.record.attempts].reverse().find((a) => a.client === who && a.resource === step.resource && a.outcome === 'granted')?.fence ??
    null;
  const earlier = fenceOf(step.earlier);
  const later = fenceOf(step.later);
  if (earlier === null || later === null) {
    const text = `no fence to compare (${step.earlier}: ${earlier ?? 'none'}, ${step.later}: ${later ?? 'none'})`;
    ctx.record.fact(step.fact, step.factLabel, text);
    return text;
  }
  const diff = later - earlier;
  const n = (x: number) => x.toLocaleString('en-US');
  const text =
    diff > 0
      ? `${step.later}'s fence is above ${step.earlier}'s (+${n(diff)})`
      : diff === 0
        ? `${step.later}'s fence equals ${step.earlier}'s: not above`
        : `${step.later}'s fence is ${n(-diff)} below ${step.earlier}'s: not above`;
  ctx.record.fact(step.fact, step.factLabel, text);
  ctx.record.say(ctx.now(), `${text} (${step.earlier}: ${earlier}, ${step.later}: ${later})`, diff > 0 ? 'ok' : 'bad');
  return text;
}
