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
 * Node's bare-HTTP floor (two fixed-body requests on a bare node:http server: bare-http.ts). The
 * lock service three ways: one process with the lean reader (the default), one with
 * REDLOCK_LEAN_HTTP=off (Node's parser reads every request: the A/B of whether the lean reader pays for itself), and two
 * processes at 32 clients, the clients split evenly across their two ports (no balancer: its CPU
 * would be neither's, and HAProxy's own cost is not the service's), their CPU summed. Per cell:
 * pairs/s, p50 per pair, the server processes' CPU per pair (/proc/<pid>/stat over the cell) and
 * the bench client's. The targets take turns in a new random order in every cell, so load moving
 * on the shared machine biases none of them.
 */
export const KINDS = ['fetch', 'node-http', 'curl'] as const;
export const COUNTS = [1, 32] as const;
export const TARGETS = ['service', 'service-plain', 'service-x2', 'etcd', 'floor'] as const;
type Kind = (typeof KINDS)[number];
type Target = (typeof TARGETS)[number];

export const TARGET_LABELS: Readonly<Record<Target, string>> = {
  service: 'lock service',
  'service-plain': 'lock service, lean reader off',
  'service-x2': 'two lock-service processes',
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

/** Targets measured at one client count only (two processes need clients to split). */
const ONLY_AT: Partial<Record<Target, number>> = { 'service-x2': 32 };
const SERVICE_TARGETS: readonly Target[] = ['service', 'service-plain', 'service-x2'];

/** How a target is driven: its addresses (clients split evenly across them), its server processes, a row's setup and teardown, one pair. */
interface Driver {
  bases: URL[];
  headers: Record<string, string>;
  /** The server processes whose CPU is summed per cell; empty when /proc does not say. */
  pids: number[];
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

function httpDriver(bases: readonly string[], pids: readonly (number | null)[], backendCpu?: () => Promise<number>): Driver {
  return {
    ...(backendCpu ? { backendCpu } : {}),
    bases: bases.map((b) => new URL(b)),
    headers: AUTH,
    pids: pids.every((p) => p !== null) ? (pids as number[]) : [],
    prepare: () => Promise.resolve([]),
    pair: (posters, _state, tag) => servicePair(posters, tag),
    finish: () => Promise.resolve(),
  };
}

function etcdDriver(m: EtcdMember): Driver {
  return {
    bases: [m.base],
    headers: {},
    pids: m.child.pid === undefined ? [] : [m.child.pid],
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

/** CPU seconds of all `pids` summed, null when one is gone (or there are none). */
function cpuOf(pids: readonly number[]): number | null {
  let total = 0;
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s === null) return null;
    total += s;
  }
  return pids.length > 0 ? total : null;
}

/** `count` clients of one kind split evenly across the driver's addresses (loop i on address i mod n). */
function openClients(driver: Driver, kind: Kind, count: number): ClientRow {
  const n = Math.min(driver.bases.length, count);
  const rows = driver.bases.slice(0, n).map((base, i) => openClientRow(kind, base, driver.headers, Math.ceil((count - i) / n)));
  const posters = Array.from({ length: count }, (_, loop) => rows[loop % n]!.posters[Math.floor(loop / n)]!);
  return { posters, close: () => rows.forEach((r) => r.close()) };
}

async function measureCell(driver: Driver, kind: Kind, count: number, ms: number, tag: string): Promise<Measured> {
  const clients: ClientRow = openClients(driver, kind, count);
  const state = await driver.prepare(clients.posters);
  try {
    const pair = driver.pair(clients.posters, state, tag);
    const backend0 = driver.backendCpu ? await driver.backendCpu() : null;
    const server0 = cpuOf(driver.pids);
    const client0 = process.cpuUsage();
    const r = await pairLoops(count, ms, pair);
    const client = process.cpuUsage(client0);
    const server1 = cpuOf(driver.pids);
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

/** A lock-service process: its address and pid (null where /proc does not say). */
export interface ServiceEndpoint {
  base: string;
  pid: number | null;
}

/**
 * The client-kind rows, on the lock-service processes already running: `lean` (the default),
 * `plain` (REDLOCK_LEAN_HTTP=off) and `second` (a second lean one: with `lean`, the two-process rows).
 */
export async function measureClientMatrix(
  ctx: BenchContext,
  services: { lean: ServiceEndpoint; plain: ServiceEndpoint; second: ServiceEndpoint },
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
    const masters = () => redisCpuSeconds(ctx.cluster);
    const { lean, plain, second } = services;
    const drivers: Partial<Record<Target, Driver>> = {
      service: httpDriver([lean.base], [lean.pid], masters),
      'service-plain': httpDriver([plain.base], [plain.pid], masters),
      'service-x2': httpDriver([lean.base, second.base], [lean.pid, second.pid], masters),
      floor: httpDriver([floor.base], [floor.child.pid ?? null]),
    };
    for (const s of [lean, plain, second]) await checkServiceExcludes(new URL(s.base));
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
    if ([lean, plain, second].some((s) => s.pid === null))
      notes.push('a lock-service process was not found under /proc: no server CPU rows for it');
    const present = TARGETS.filter((t) => drivers[t]);
    for (const target of present)
      for (const kind of KINDS) await measureCell(drivers[target]!, kind, 32, 300, `warm-${kind}`).catch(() => undefined);
    for (let run = 1; run <= ctx.options.runs; run++) {
      // Each server's CPU with no client at all (background work: the lock index, the history
      // flush, node probes): a pair's CPU at one client carries its share of it.
      const rest0 = present.map((t) => cpuOf(drivers[t]!.pids));
      await sleep(REST_MS);
      present.forEach((t, i) => {
        const after = cpuOf(drivers[t]!.pids);
        atRest.get(t)!.push(rest0[i] === null || after === null ? Number.NaN : ((after - rest0[i]!) * 1e3) / (REST_MS / 1e3));
      });
      for (const kind of KINDS) {
        for (const count of COUNTS) {
          for (const target of shuffled(present.filter((t) => (ONLY_AT[t] ?? count) === count))) {
            const m = await measureCell(drivers[target]!, kind, count, ms, `${target}-${kind}-${count}-${run}`);
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
      for (const target of TARGETS.filter((t) => (ONLY_AT[t] ?? count) === count)) {
        const c = get(kind, count, target);
        const failed = c.failed > 0 ? `${c.failed} pairs failed` : undefined;
        const label = TARGET_LABELS[target];
        rows.push(row(`${label}: pairs/s`, 'pairs/s', figure(c.pairsPerSecond), failed));
        rows.push(row(`${label}: p50 per pair`, 'ms', figure(c.p50)));
        rows.push(row(`${label}: server CPU per pair`, 'µs', figure(c.serverCpu)));
        if (SERVICE_TARGETS.includes(target)) rows.push(row(`${label}: the five masters' CPU per pair`, 'µs', figure(c.mastersCpu)));
        rows.push(row(`${label}: bench client CPU per pair`, 'µs', figure(c.clientCpu)));
      }
      const service = get(kind, count, 'service');
      const cpuRatio = figure(ratios(service.serverCpu, get(kind, count, 'floor').serverCpu));
      const etcdRate = figure(ratios(service.pairsPerSecond, get(kind, count, 'etcd').pairsPerSecond));
      const etcdP50 = figure(ratios(service.p50, get(kind, count, 'etcd').p50));
      const plain = get(kind, count, 'service-plain');
      rows.push(row('lock service / floor: server CPU per pair', '×', cpuRatio));
      rows.push(
        row('lean reader off / floor: server CPU per pair', '×', figure(ratios(plain.serverCpu, get(kind, count, 'floor').serverCpu))),
      );
      rows.push(row('lean reader off / on: server CPU per pair', '×', figure(ratios(plain.serverCpu, service.serverCpu))));
      rows.push(row('lean reader off / on: pairs/s', '×', figure(ratios(plain.pairsPerSecond, service.pairsPerSecond))));
      if (ONLY_AT['service-x2'] === count) {
        const two = get(kind, count, 'service-x2');
        rows.push(
          row(
            'two processes / floor: server CPU per pair (both pids)',
            '×',
            figure(ratios(two.serverCpu, get(kind, count, 'floor').serverCpu)),
          ),
        );
        rows.push(row('two processes / one: server CPU per pair', '×', figure(ratios(two.serverCpu, service.serverCpu))));
        rows.push(row('two processes / one: pairs/s', '×', figure(ratios(two.pairsPerSecond, service.pairsPerSecond))));
      }
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
      `1 and 32 clients, ${ms / 1_000} s per cell, fenced acquire + release against the lock service (one process with the lean reader, ` +
      `one with REDLOCK_LEAN_HTTP=off, and at 32 clients two lean processes with the clients split evenly across their ports, ` +
      `no balancer between: HAProxy's CPU is not the service's and would take the same two cores), ${etcdLine} ` +
      `(one member on 127.0.0.1, v3 lock/unlock over its HTTP gateway on a session lease per client) and Node's bare-HTTP floor ` +
      `(a node:http server answering a fixed body: the same two requests per pair), in a new random order per cell; server CPU ` +
      `per pair from /proc/<pid>/stat of the serving processes over the cell (the lock-service process, or both summed; etcd; the floor's server). ` +
      `Before measuring, each must exclude: a second acquire of a held name is refused (the service) or waits (etcd).`,
  };
}
