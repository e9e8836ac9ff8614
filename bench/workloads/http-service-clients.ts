import { redisCpuSeconds } from '../harness/cluster';
import { API_KEY } from '../harness/console';
import { startBareHttp, stopBareHttp } from '../harness/bare-http';
import type { BenchContext } from '../harness/context';
import { checkEtcdExcludes, etcdPair, etcdVersion, grantLease, revokeLease, startEtcd, stopEtcd, type EtcdMember } from '../harness/etcd';
import { HttpConnection } from '../harness/http-client';
import { CLIENT_LABELS, openClientRow, type ClientRow, type Poster } from '../harness/http-clients';
import { pairLoops } from '../harness/pair-loops';
import { cpuMicrosPerPair, processCpuSeconds } from '../harness/process-cpu';
import { atLeast, atMost, row, type Row, type Section, type TargetCheck } from '../harness/report';
import { figure, percentile, ratios, shuffled } from '../harness/stats';
import { describeError, sleep } from '../harness/util';

/**
 * The lock service with the HTTP clients programs use (fetch, node:http keep-alive, curl-like: a
 * connection per request), at 1 and 32 clients, against two peers with the same client in the same
 * run: etcd's own lock API (one member, v3 lock/unlock over its HTTP gateway on session leases) and
 * Node's bare-HTTP floor (two fixed-body requests on a bare node:http server: bare-http.ts). Per
 * cell: pairs/s, p50 per pair, the server process's CPU per pair (/proc/<pid>/stat over the cell)
 * and the bench client's. The targets and the servers take turns in a new random order in every
 * cell, so load moving on the shared machine biases none of them.
 */
export const KINDS = ['fetch', 'node-http', 'curl'] as const;
export const COUNTS = [1, 32] as const;
export const TARGETS = ['service', 'etcd', 'floor'] as const;
type Kind = (typeof KINDS)[number];
type Target = (typeof TARGETS)[number];

export const TARGET_LABELS: Readonly<Record<Target, string>> = {
  service: 'lock service',
  etcd: 'etcd lock API',
  floor: 'bare node:http floor',
};

const TTL_MS = 10_000;
/** How long each server's CPU is read with no client, per run. */
const REST_MS = 1_000;

/** One cell's per-run figures. */
interface Cell {
  pairsPerSecond: number[];
  p50: number[];
  serverCpu: number[];
  clientCpu: number[];
  /** The five masters' CPU per pair (the lock service's cells only: its state lives there). */
  mastersCpu: number[];
  failed: number;
}

/** How a target is driven: its address, its server process, a row's setup and teardown, one pair. */
interface Driver {
  base: URL;
  headers: Record<string, string>;
  pid: number | null;
  /** CPU seconds of the servers behind it (the lock service's masters), if any. */
  backendCpu?: () => Promise<number>;
  prepare(posters: readonly Poster[]): Promise<string[]>;
  pair(posters: readonly Poster[], state: readonly string[], tag: string): (loop: number) => Promise<boolean>;
  finish(posters: readonly Poster[], state: readonly string[]): Promise<void>;
}

export const AUTH = { authorization: `Bearer ${API_KEY}` };

/** The lock service's pair (and the floor's: the same two requests, answered with a fixed body). */
export function servicePair(posters: readonly Poster[], tag: string): (loop: number) => Promise<boolean> {
  return async (loop) => {
    const poster = posters[loop]!;
    const resource = `kind-${tag}-${loop}`;
    const granted = await poster.post('/api/locks', { resource, ttlMs: TTL_MS, fenced: true });
    if (granted.status !== 200 || typeof granted.body.token !== 'string') return false;
    const released = await poster.post(`/api/locks/${encodeURIComponent(resource)}/release`, { token: granted.body.token });
    return released.status === 200 && released.body.released === true;
  };
}

function httpDriver(base: string, pid: number | null, backendCpu?: () => Promise<number>): Driver {
  return {
    ...(backendCpu ? { backendCpu } : {}),
    base: new URL(base),
    headers: AUTH,
    pid,
    prepare: () => Promise.resolve([]),
    pair: (posters, _state, tag) => servicePair(posters, tag),
    finish: () => Promise.resolve(),
  };
}

function etcdDriver(m: EtcdMember): Driver {
  return {
    base: m.base,
    headers: {},
    pid: m.child.pid ?? null,
    prepare: (posters) => Promise.all(posters.map((p) => grantLease(p))),
    pair: (posters, leases, tag) => (loop) => etcdPair(posters[loop]!, `kind-${tag}-${loop}`, leases[loop]!),
    finish: async (posters, leases) => {
      await Promise.all(leases.map((lease, i) => revokeLease(posters[i]!, lease)));
    },
  };
}

/**
 * The lock service must exclude before it is measured, as every peer: a second acquire of a held
 * resource is refused (409), and granted once the first is released.
 */
async function checkServiceExcludes(base: URL): Promise<void> {
  const conn = new HttpConnection(base.hostname, Number(base.port), AUTH);
  try {
    const resource = `kind-exclusion-${process.pid}`;
    const first = await conn.post('/api/locks', { resource, ttlMs: TTL_MS });
    const second = await conn.post('/api/locks', { resource, ttlMs: TTL_MS });
    if (first.status !== 200 || second.status !== 409)
      throw new Error(`the lock service granted ${resource} twice (${first.status}, then ${second.status}): not measured`);
    await conn.post(`/api/locks/${resource}/release`, { token: first.body.token });
    const third = await conn.post('/api/locks', { resource, ttlMs: TTL_MS });
    if (third.status !== 200) throw new Error(`the lock service did not grant ${resource} after its release (${third.status})`);
    await conn.post(`/api/locks/${resource}/release`, { token: third.body.token });
  } finally {
    conn.close();
  }
}

interface Measured {
  pairsPerSecond: number;
  p50: number;
  serverCpu: number;
  clientCpu: number;
  mastersCpu: number;
  failed: number;
}

async function measureCell(driver: Driver, kind: Kind, count: number, ms: number, tag: string): Promise<Measured> {
  const clients: ClientRow = openClientRow(kind, driver.base, driver.headers, count);
  const state = await driver.prepare(clients.posters);
  try {
    const pair = driver.pair(clients.posters, state, tag);
    const backend0 = driver.backendCpu ? await driver.backendCpu() : null;
    const server0 = driver.pid === null ? null : processCpuSeconds(driver.pid);
    const client0 = process.cpuUsage();
    const r = await pairLoops(count, ms, pair);
    const client = process.cpuUsage(client0);
    const server1 = driver.pid === null ? null : processCpuSeconds(driver.pid);
    const backend1 = driver.backendCpu ? await driver.backendCpu() : null;
    return {
      pairsPerSecond: (r.pairs / ms) * 1_000,
      p50: percentile(
        r.times.sort((a, b) => a - b),
        50,
      ),
      serverCpu: cpuMicrosPerPair(server0, server1, r.pairs),
      clientCpu: cpuMicrosPerPair(0, (client.user + client.system) / 1e6, r.pairs),
      mastersCpu: cpuMicrosPerPair(backend0, backend1, r.pairs),
      failed: r.failed,
    };
  } finally {
    await driver.finish(clients.posters, state).catch(() => undefined);
    clients.close();
  }
}

export interface ClientMatrix {
  sections: Section[];
  targets: TargetCheck[];
  notes: string[];
  details: Record<string, unknown>;
  method: string;
}

/** The client-kind rows, on the console already running at `consoleBase` (its server process `consolePid`). */
export async function measureClientMatrix(
  ctx: BenchContext,
  consoleBase: string,
  consolePid: number | null,
  ms: number,
): Promise<ClientMatrix> {
  const notes: string[] = [];
  const version = etcdVersion();
  const floor = await startBareHttp();
  let etcd: EtcdMember | null = null;
  /** etcd ran and passed its exclusion check: without it its rows are empty and its targets left out. */
  let etcdMeasured = false;
  const cells = new Map<string, Cell>();
  const atRest = new Map<Target, number[]>(TARGETS.map((t) => [t, []]));
  const cellOf = (kind: Kind, count: number, target: Target) => {
    const key = `${kind}/${count}/${target}`;
    let cell = cells.get(key);
    if (!cell) cells.set(key, (cell = { pairsPerSecond: [], p50: [], serverCpu: [], clientCpu: [], mastersCpu: [], failed: 0 }));
    return cell;
  };
  try {
    const drivers: Partial<Record<Target, Driver>> = {
      service: httpDriver(consoleBase, consolePid, () => redisCpuSeconds(ctx.cluster)),
      floor: httpDriver(floor.base, floor.child.pid ?? null),
    };
    await checkServiceExcludes(new URL(consoleBase));
    if ('missing' in version) notes.push(`etcd rows skipped: ${version.missing}`);
    else {
      try {
        etcd = await startEtcd(version.version);
        await checkEtcdExcludes(etcd);
        drivers.etcd = etcdDriver(etcd);
        etcdMeasured = true;
      } catch (err) {
        notes.push(`etcd rows skipped: ${describeError(err)}`);
      }
    }
    if (consolePid === null) notes.push('the console server process was not found under /proc: no server CPU rows for the lock service');
    const present = TARGETS.filter((t) => drivers[t]);
    for (const target of present)
      for (const kind of KINDS) await measureCell(drivers[target]!, kind, 32, 300, `warm-${kind}`).catch(() => undefined);
    for (let run = 1; run <= ctx.options.runs; run++) {
      // Each server's CPU with no client at all (the console's background work: the lock index,
      // the history flush, node probes): a pair's CPU at one client carries its share of it.
      const rest0 = present.map((t) => processCpuSeconds(drivers[t]!.pid ?? -1));
      await sleep(REST_MS);
      present.forEach((t, i) => {
        const after = processCpuSeconds(drivers[t]!.pid ?? -1);
        atRest.get(t)!.push(rest0[i] === null || after === null ? Number.NaN : ((after - rest0[i]!) * 1e3) / (REST_MS / 1e3));
      });
      for (const kind of KINDS) {
        for (const count of COUNTS) {
          for (const target of shuffled(present)) {
            const m = await measureCell(drivers[target]!, kind, count, ms, `${kind}-${count}-${run}`);
            const cell = cellOf(kind, count, target);
            cell.pairsPerSecond.push(m.pairsPerSecond);
            cell.p50.push(m.p50);
            cell.serverCpu.push(m.serverCpu);
            cell.clientCpu.push(m.clientCpu);
            cell.mastersCpu.push(m.mastersCpu);
            cell.failed += m.failed;
          }
        }
      }
      ctx.log(`http-service: client kinds, run ${run}/${ctx.options.runs} done`);
    }
  } finally {
    if (etcd) await stopEtcd(etcd);
    await stopBareHttp(floor);
  }
  const get = (kind: Kind, count: number, target: Target): Cell => cellOf(kind, count, target);
  const sections: Section[] = [];
  const targets: TargetCheck[] = [];
  for (const kind of KINDS) {
    for (const count of COUNTS) {
      const rows: Row[] = [];
      for (const target of TARGETS) {
        const c = get(kind, count, target);
        const failed = c.failed > 0 ? `${c.failed} pairs failed` : undefined;
        const label = TARGET_LABELS[target];
        rows.push(row(`${label}: pairs/s`, 'pairs/s', figure(c.pairsPerSecond), failed));
        rows.push(row(`${label}: p50 per pair`, 'ms', figure(c.p50)));
        rows.push(row(`${label}: server CPU per pair`, 'µs', figure(c.serverCpu)));
        if (target === 'service') rows.push(row(`${label}: the five masters' CPU per pair`, 'µs', figure(c.mastersCpu)));
        rows.push(row(`${label}: bench client CPU per pair`, 'µs', figure(c.clientCpu)));
      }
      const service = get(kind, count, 'service');
      const cpuRatio = figure(ratios(service.serverCpu, get(kind, count, 'floor').serverCpu));
      const etcdRate = figure(ratios(service.pairsPerSecond, get(kind, count, 'etcd').pairsPerSecond));
      const etcdP50 = figure(ratios(service.p50, get(kind, count, 'etcd').p50));
      rows.push(row('lock service / floor: server CPU per pair', '×', cpuRatio));
      rows.push(row('lock service / etcd: pairs/s', '×', etcdRate));
      rows.push(row('lock service / etcd: p50 per pair', '×', etcdP50));
      sections.push({ title: `${CLIENT_LABELS[kind]}, ${count} client${count === 1 ? '' : 's'}, fenced acquire + release`, rows });
      const who = `${CLIENT_LABELS[kind]}, ${count} client${count === 1 ? '' : 's'}`;
      if (count === 32) {
        targets.push(atMost('9. HTTP lock service', `server CPU per pair ≤ 1.5× the bare floor's (${who})`, cpuRatio, 1.5, '×'));
        if (etcdMeasured) targets.push(atLeast('9. HTTP lock service', `pairs/s ≥ 2× etcd's (${who})`, etcdRate, 2, '×'));
      } else if (etcdMeasured) {
        targets.push(atMost('9. HTTP lock service', `p50 per pair below etcd's (${who})`, etcdP50, 1, '×'));
      }
    }
  }
  sections.push({
    title: 'each server with no client (background work), read over 1 s per run',
    rows: TARGETS.map((t) => row(`${TARGET_LABELS[t]}: CPU at rest`, 'ms/s', figure(atRest.get(t)!))),
  });
  const etcdLine = etcd ? `etcd ${etcd.version}` : 'etcd (skipped)';
  return {
    sections,
    targets,
    notes,
    details: { clientKinds: Object.fromEntries(cells), atRest: Object.fromEntries(atRest) },
    method:
      `Then, with the clients programs use (fetch, node:http with a keep-alive Agent, curl-like: a new connection per request), ` +
      `1 and 32 clients, ${ms / 1_000} s per cell, fenced acquire + release against the lock service, ${etcdLine} ` +
      `(one member on 127.0.0.1, v3 lock/unlock over its HTTP gateway on a session lease per client) and Node's bare-HTTP floor ` +
      `(a node:http server answering a fixed body: the same two requests per pair), in a new random order per cell; server CPU ` +
      `per pair from /proc/<pid>/stat of the serving process over the cell (the console's HTTP server, etcd, the floor's server). ` +
      `Before measuring, each must exclude: a second acquire of a held name is refused (the service) or waits (etcd).`,
  };
}
