import { Redlock } from '@redlock-console/redlock';
import { MAX_TTL_MS, OUR_PREFIX } from '../harness/cluster';
import { API_KEY } from '../harness/console';
import { serviceDataDir, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../harness/lock-service';
import { HttpConnection } from '../harness/http-client';
import { pick, type BenchContext, type Workload } from '../harness/context';
import { atLeast, atMost, row, type Section } from '../harness/report';
import { figure, percentile, ratios } from '../harness/stats';
import { sleep } from '../harness/util';
import { pairLoops as loops } from '../harness/pair-loops';
import { measureClientMatrix, type ClientMatrix } from './http-service-clients';

/**
 * The HTTP lock service against the lock core it wraps, on the same five masters in the
 * same run. The bench starts the lock service as its own process (scripts/lock-service-server.ts,
 * the data plane `npm start` runs beside the console), three of them on the bench's masters: the
 * default (lean reader), one with REDLOCK_LEAN_HTTP=off and a second lean one for the two-process
 * rows; the core runs in this process. Each loop takes
 * a lock and releases it (API key over HTTP/1.1 keep-alive, one connection per loop), fenced (the
 * service's default) and not; the core and HTTP take turns in every run.
 *
 * Targets: at 32 loops, HTTP pairs/s ≥ 25 % of the core's; at one loop, a pair over HTTP within
 * about 1 ms of the core's (the p50 difference).
 */
const LOOPS = 32;
const TTL_MS = 10_000;

/** One keep-alive connection per loop (bench/harness/http-client.ts), as a pooled client would hold. */
function connections(count: number, base: URL): HttpConnection[] {
  return Array.from({ length: count }, () => new HttpConnection(base.hostname, Number(base.port), { authorization: `Bearer ${API_KEY}` }));
}

function httpPair(conns: readonly HttpConnection[], tag: string, fenced: boolean): (loop: number) => Promise<boolean> {
  return async (loop) => {
    const conn = conns[loop]!;
    const resource = `http-${tag}-${loop}`;
    const granted = await conn.post('/api/locks', { resource, ttlMs: TTL_MS, fenced });
    if (granted.status !== 200 || typeof granted.body.token !== 'string') return false;
    const released = await conn.post(`/api/locks/${encodeURIComponent(resource)}/release`, { token: granted.body.token });
    return released.status === 200 && released.body.released === true;
  };
}

function corePair(core: Redlock, tag: string, fenced: boolean): (loop: number) => Promise<boolean> {
  return async (loop) => {
    const lock = await core.acquire(`core-${tag}-${loop}`, TTL_MS, { fenced });
    await lock.release();
    return true;
  };
}

const MODES = [
  { id: 'fenced', fenced: true },
  { id: 'unfenced', fenced: false },
] as const;

export const httpService: Workload = {
  id: 'http-service',
  async run(ctx: BenchContext) {
    const { cluster, options } = ctx;
    const ms = pick(options, 2_000, 4_000);
    await cluster.reset();
    const data = serviceDataDir();
    const started: ServiceProcess[] = [];
    const start = async (env: Record<string, string> = {}) => {
      const s = await startServiceProcess(cluster.urls, data.dir, env);
      started.push(s);
      return s;
    };
    let lean: ServiceProcess;
    let plain: ServiceProcess;
    let second: ServiceProcess;
    try {
      ctx.log('http-service: starting three lock-service processes (lean, REDLOCK_LEAN_HTTP=off, a second lean one)');
      [lean, plain, second] = [await start(), await start({ REDLOCK_LEAN_HTTP: 'off' }), await start()];
    } catch (err) {
      await Promise.all(started.map(stopServiceProcess));
      data.remove();
      throw err;
    }
    const base = new URL(lean.base);
    const core = new Redlock([...cluster.urls], { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS });
    await core.connect();
    type Key = `${'core' | 'http'}-${(typeof MODES)[number]['id']}-${1 | 32}`;
    const pairsPerSecond = new Map<Key, number[]>();
    const p50 = new Map<Key, number[]>();
    const push = (map: Map<Key, number[]>, key: Key, value: number) => map.set(key, [...(map.get(key) ?? []), value]);
    let failed = 0;
    let matrix: ClientMatrix;
    try {
      const warm = connections(LOOPS, base);
      await loops(LOOPS, 1_000, httpPair(warm, 'warm', true));
      await loops(LOOPS, 500, corePair(core, 'warm', true));
      for (const c of warm) c.close();
      for (let run = 1; run <= options.runs; run++) {
        for (const mode of MODES) {
          for (const c of [1, 32] as const) {
            const conns = connections(c, base);
            const http = await loops(c, ms, httpPair(conns, `${mode.id}-${run}`, mode.fenced));
            for (const conn of conns) conn.close();
            const direct = await loops(c, ms, corePair(core, `${mode.id}-${run}`, mode.fenced));
            failed += http.failed + direct.failed;
            for (const [who, r] of [
              ['http', http],
              ['core', direct],
            ] as const) {
              const key: Key = `${who}-${mode.id}-${c}`;
              push(pairsPerSecond, key, (r.pairs / ms) * 1_000);
              push(
                p50,
                key,
                percentile(
                  r.times.sort((a, b) => a - b),
                  50,
                ),
              );
            }
          }
        }
        ctx.log(`http-service: run ${run}/${options.runs} done`);
        await sleep(200);
      }
      matrix = await measureClientMatrix(ctx, { lean, plain, second }, pick(options, 1_500, 3_000));
    } finally {
      await core.quit();
      await Promise.all(started.map(stopServiceProcess));
      data.remove();
    }
    const get = (map: Map<Key, number[]>, key: Key) => map.get(key) ?? [];
    const diff = (a: number[], b: number[]) => a.map((x, i) => x - (b[i] ?? 0));
    const sections: Section[] = MODES.map((mode) => {
      const share32 = figure(ratios(get(pairsPerSecond, `http-${mode.id}-32`), get(pairsPerSecond, `core-${mode.id}-32`)));
      const extra1 = figure(diff(get(p50, `http-${mode.id}-1`), get(p50, `core-${mode.id}-1`)));
      return {
        title: `${mode.id} (${mode.fenced ? 'the service default' : 'fenced: false'}), acquire + release`,
        rows: [
          row(`core, ${LOOPS} loops`, 'pairs/s', figure(get(pairsPerSecond, `core-${mode.id}-32`))),
          row(`HTTP, ${LOOPS} loops`, 'pairs/s', figure(get(pairsPerSecond, `http-${mode.id}-32`))),
          row(`HTTP / core, ${LOOPS} loops`, '×', share32),
          row('core, 1 loop, p50 per pair', 'ms', figure(get(p50, `core-${mode.id}-1`))),
          row('HTTP, 1 loop, p50 per pair', 'ms', figure(get(p50, `http-${mode.id}-1`))),
          row('HTTP − core, 1 loop, p50 per pair', 'ms', extra1, failed > 0 ? `${failed} pairs failed in the workload` : undefined),
        ],
      };
    });
    const fenced32 = figure(ratios(get(pairsPerSecond, 'http-fenced-32'), get(pairsPerSecond, 'core-fenced-32')));
    const fenced1 = figure(diff(get(p50, 'http-fenced-1'), get(p50, 'core-fenced-1')));
    return {
      id: 'http-service',
      title: '9. The HTTP lock service against the core',
      method:
        `The lock-service process (scripts/lock-service-server.ts as npm start runs it beside the console, started by the bench on its masters: REDLOCK_NODES) and the lock core in the bench process, on the same masters, taking turns: ` +
        `${LOOPS} loops and 1 loop of acquire + release for ${ms / 1_000} s each, fenced and not; HTTP with an API key over keep-alive ` +
        `connections (one per loop, bench/harness/http-client.ts), every grant checked for a token and every release for released: true. ` +
        matrix.method,
      sections: [...sections, ...matrix.sections],
      targets: [
        atLeast('9. HTTP lock service', `HTTP pairs/s ≥ 25 % of the core's at ${LOOPS} loops (fenced)`, fenced32, 0.25, '×'),
        atMost('9. HTTP lock service', 'a pair over HTTP within ~1 ms of the core at 1 loop (fenced, p50)', fenced1, 1.0, 'ms'),
        ...matrix.targets,
      ],
      notes: matrix.notes,
      details: matrix.details,
    };
  },
};
