import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpConnection } from '../../bench/harness/http-client';
import { API_KEY, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';

/**
 * Anonymous keep-alive sockets took the console down (three scripts holding
 * 6,800 each, every socket sending an unauthenticated `POST /api/locks {}` every 30 s, exhausted its
 * 20,000 open files in ~120 s; a 401 kept the connection and re-armed its idle timer). This runs
 * the same attack, three processes of 6,800 sockets (test/support/socket-flood.mjs), one from a
 * single address (127.0.0.18), two from 16 (127.0.0.2–17), 40 % of them only holding their socket, each connecting at a random
 * moment of its first 30 s (so ~680 a second, as the review's scripts once they were refused), on
 * the lock service's server set up as the console's (lib/server/http/front.ts), and measures in the
 * same test an API-key holder's acquire+release before and during the flood.
 *
 * The console's limits, but its caps scaled down to this host (two cores; 20,000 descriptors per
 * process, the server sharing the test's): 1,024 connections in all, 128 per peer. Shown: (a) the
 * caps hold, on the guard's count and on Node's; (b) the holder's p50 during the flood is within 2×
 * of before, and a new API-key connection gets in while the caps are full (an idle anonymous one
 * makes room); (c) a socket answered 401 is answered `Connection: close` and closed, every time.
 * On main before the fix the server held 19,471 of 19,600 sockets (its process at its 20,000 open
 * files) and 9,600 sockets were still open 2 s after their 401.
 */
const FLOOD_SOURCES = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`);
/** The first process's one address (one attacking host: the per-peer cap's case). */
const LONE_SOURCE = '127.0.0.18';
const FLOOD_PROCESSES = 3;
const FLOOD_SOCKETS_EACH = Number(process.env.FLOOD_SOCKETS_EACH ?? 6_800);
const FLOOD_SOCKETS = FLOOD_PROCESSES * FLOOD_SOCKETS_EACH;
const LIMITS = { maxConnections: 1_024, maxPerPeer: 128 };

/** The console's limits made short, and tiny caps, for the tests of each rule one at a time. */
const SHORT = { maxConnections: 6, maxPerPeer: 3, anonymousIdleMs: 400, keepAliveMs: 3_000, headersMs: 600, requestMs: 1_200 };

let api: ApiHarness;
let server: LockServiceServer;
let short: LockServiceServer;
let floods: ChildProcess[] = [];

beforeAll(async () => {
  // The console's 100 ms deadline for a master, not the harness's 1 s: check (b) below counts the
  // pairs a stalled event loop turned into 503s, against the windows with the flood stopped.
  api = await startApi({ nodes: 3, maxTtlMs: 10_000, nodeTimeoutMs: 100 });
  server = await startLockServiceServer(LIMITS);
  short = await startLockServiceServer(SHORT);
});
afterAll(async () => {
  for (const f of floods) f.kill('SIGKILL');
  await short?.close();
  await server?.close();
  await api?.stop();
});

/** A raw socket from `from` (a loopback address) that records what it is sent and when it is closed. */
class Peer {
  readonly socket: Socket;
  text = '';
  closedAt = 0;
  readonly opened = performance.now();
  private readonly connected: Promise<void>;

  constructor(port: number, from = '127.0.0.1') {
    this.socket = connect({ host: '127.0.0.1', port, localAddress: from });
    this.connected = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (chunk: Buffer) => (this.text += chunk.toString('latin1')));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closedAt = performance.now()));
  }

  get closed(): boolean {
    return this.closedAt > 0;
  }

  async send(text: string): Promise<void> {
    await this.connected;
    this.socket.write(text);
  }

  /** The status lines of the answers so far. */
  get statuses(): number[] {
    return [...this.text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  }

  async until(check: () => boolean, ms = 3_000): Promise<void> {
    const deadline = performance.now() + ms;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`timed out; received ${JSON.stringify(this.text.slice(0, 300))}`);
      // poll: until()'s interval
      await sleep(10);
    }
  }
}

const acquire = (key: string | null, resource: string, extra = '') => {
  const body = JSON.stringify({ resource, ttlMs: 2_000 });
  return (
    `POST /api/locks HTTP/1.1\r\nHost: console.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
    `${key ? `Authorization: Bearer ${key}\r\n` : ''}${extra}\r\n${body}`
  );
};
/** A header valid to llhttp that the lean reader leaves to Node's parser: the request goes Node's path. */
const NODE_PATH = 'X-Note: caf\u00e9\r\n';

describe('the connection rules, one at a time', () => {
  for (const path of ['lean', 'node'] as const)
    it(`a 401 on the ${path} path is answered Connection: close and the socket closed`, async () => {
      const peer = new Peer(short.port);
      await peer.send(acquire(null, 'rule-401', path === 'node' ? NODE_PATH : ''));
      await peer.until(() => peer.closed);
      expect(peer.statuses).toEqual([401]);
      expect(peer.text.toLowerCase()).toContain('connection: close');
    });

  it('an anonymous connection is closed after 400 ms idle, before its first request and after a request it was not refused', async () => {
    const silent = new Peer(short.port);
    const answered = new Peer(short.port);
    await answered.send('GET /elsewhere HTTP/1.1\r\nHost: console.test\r\n\r\n'); // Node's path: a 404, not a refusal
    await silent.until(() => silent.closed, 2_000);
    await answered.until(() => answered.closed, 2_000);
    expect(answered.statuses).toEqual([404]);
    expect(answered.text.toLowerCase()).toContain('keep-alive: timeout=0'); // it is told its short idle timeout
    expect(silent.closedAt - silent.opened).toBeGreaterThanOrEqual(350);
    expect(silent.closedAt - silent.opened).toBeLessThan(1_500);
  });

  for (const path of ['lean', 'node'] as const)
    it(`a connection an API key authenticated on (${path} path) keeps the long keep-alive`, async () => {
      const peer = new Peer(short.port);
      await peer.send(acquire(API_KEY, `rule-keep-${path}`, path === 'node' ? NODE_PATH : ''));
      await peer.until(() => peer.statuses.length === 1);
      expect(peer.statuses).toEqual([200]);
      expect(peer.text.toLowerCase()).toContain('keep-alive: timeout=3');
      // absence: 900 ms, past the short keep-alive the key must lift the connection out of
      await sleep(900);
      expect(peer.closed).toBe(false);
      peer.socket.destroy();
    });

  it('a head that trickles in is cut at the headers timeout on Node’s path too (408)', async () => {
    const peer = new Peer(short.port);
    await peer.send('GET /elsewhere HTTP/1.1\r\nHost: console.test\r\n');
    for (let i = 0; i < 30 && !peer.closed; i++) {
      // pace: a header line every 100 ms
      await sleep(100);
      if (!peer.closed) peer.socket.write(`X-${i}: 1\r\n`);
    }
    expect(peer.closed).toBe(true);
    expect(peer.statuses).toEqual([408]);
    expect(peer.closedAt - peer.opened).toBeLessThan(600 + 1_500); // Node checks every second
  });

  it('a body that trickles in is cut at the request timeout (Node’s path) and at the headers timeout (lean path)', async () => {
    for (const path of ['lean', 'node'] as const) {
      const peer = new Peer(short.port);
      const head = acquire(API_KEY, 'rule-body', path === 'node' ? NODE_PATH : '');
      await peer.send(head.slice(0, head.length - 10)); // the body's last 10 bytes, one at a time
      for (let i = 0; i < 40 && !peer.closed; i++) {
        // pace: a body byte every 100 ms
        await sleep(100);
        if (!peer.closed && i < 9) peer.socket.write(head[head.length - 10 + i]!);
      }
      expect(peer.closed, path).toBe(true);
      expect(peer.closedAt - peer.opened, path).toBeLessThan((path === 'node' ? SHORT.requestMs : SHORT.headersMs) + 1_500);
    }
  });

  it('caps: a 4th connection from one address closes its oldest idle anonymous one; with none idle, it is refused; the total cap likewise', async () => {
    const from = '127.0.0.40';
    const first = new Peer(short.port, from);
    // pace: the first connection is the oldest
    await sleep(30);
    const others = [new Peer(short.port, from), new Peer(short.port, from)];
    // pace: the fourth comes after the others
    await sleep(50);
    const fourth = new Peer(short.port, from);
    await first.until(() => first.closed, 1_000); // the oldest idle one made room
    // absence: 50 ms in which no other connection may be closed
    await sleep(50);
    expect(others.some((p) => p.closed)).toBe(false);
    expect(fourth.closed).toBe(false);
    // Three authenticated connections from one address: a 4th finds none to close and is refused.
    for (const p of [...others, fourth]) p.socket.destroy();
    const holders = [new Peer(short.port, '127.0.0.41'), new Peer(short.port, '127.0.0.41'), new Peer(short.port, '127.0.0.41')];
    for (const [i, h] of holders.entries()) await h.send(acquire(API_KEY, `rule-cap-${i}`));
    for (const h of holders) await h.until(() => h.statuses.length === 1);
    const refused = new Peer(short.port, '127.0.0.41');
    await refused.until(() => refused.closed, 1_000);
    expect(refused.text).toBe('');
    expect(holders.some((h) => h.closed)).toBe(false);
    // The total (6): three more anonymous from elsewhere fill it; the next evicts one of those, never a holder.
    const fill = [new Peer(short.port, '127.0.0.42'), new Peer(short.port, '127.0.0.43'), new Peer(short.port, '127.0.0.44')];
    // pace: the fill is older than the newcomer
    await sleep(50);
    const newcomer = new Peer(short.port, '127.0.0.45');
    await newcomer.send(acquire(API_KEY, 'rule-cap-newcomer'));
    await newcomer.until(() => newcomer.statuses.length === 1);
    expect(newcomer.statuses).toEqual([200]);
    await fill[0]!.until(() => fill[0]!.closed, 1_000);
    expect(holders.some((h) => h.closed)).toBe(false);
    for (const p of [...holders, ...fill, newcomer]) p.socket.destroy();
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Acquire+release pairs on one keep-alive connection for `ms`: each pair's time (a pair the core
 * refused for want of a quorum, its masters not answering within 100 ms, counts in `failed`).
 */
async function pairs(conn: HttpConnection, tag: string, ms: number, failed?: { count: number }): Promise<number[]> {
  const times: number[] = [];
  const until = performance.now() + ms;
  for (let i = 0; performance.now() < until; i++) {
    const t0 = performance.now();
    const granted = await conn.post('/api/locks', { resource: `flood-${tag}-${i % 8}`, ttlMs: 5_000 });
    if (granted.status === 503 && failed) {
      failed.count++;
      continue;
    }
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    const released = await conn.post(`/api/locks/flood-${tag}-${i % 8}/release`, { token: granted.body.token });
    expect(released.status).toBe(200);
    times.push(performance.now() - t0);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface FloodStats {
  open: number;
  openBySource: Record<string, number>;
  maxOpen: number;
  maxOpenBySource: number;
  connects: number;
  connectErrors: number;
  requests: number;
  answers401: number;
  closedUnanswered: number;
  closedAfter401: number;
  slowestCloseAfter401Ms: number;
  openLongAfter401: number;
  cpuMs: number;
}

/** One anonymous request on a fresh socket: the answer's head, and whether the server closed the socket. */
function anonymousOnce(port: number): Promise<{ head: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let head = '';
    let timer: NodeJS.Timeout | null = null;
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      timer ??= setTimeout(() => {
        socket.destroy();
        resolve({ head, closed: false });
      }, 1_000);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (timer) clearTimeout(timer);
      resolve({ head, closed: true });
    });
    socket.write('POST /api/locks HTTP/1.1\r\nHost: console.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
  });
}

describe('anonymous sockets cannot take the lock service down', () => {
  it('a socket answered 401 is told Connection: close and closed', async () => {
    const { head, closed } = await anonymousOnce(server.port);
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(closed).toBe(true);
  });

  it(`with ${FLOOD_SOCKETS.toLocaleString('en')} anonymous keep-alive sockets knocking: the caps hold, an API-key holder's p50 stays within 2× and a new one gets in`, async () => {
    const holder = new HttpConnection('127.0.0.1', server.port, { authorization: `Bearer ${API_KEY}` });
    await pairs(holder, 'warm', 1_000);
    const before = await pairs(holder, 'before', 3_000);

    const last: Array<FloodStats | null> = Array.from({ length: FLOOD_PROCESSES }, () => null);
    floods = last.map((_, i) => {
      // At the lowest priority: an attacker is another machine; here it shares the two cores with
      // the server and the masters, and must not be measured as the server's slowness.
      const child = spawn(
        'nice',
        [
          '-n',
          '19',
          process.execPath,
          'test/support/socket-flood.mjs',
          JSON.stringify({
            port: server.port,
            sources: i === 0 ? [LONE_SOURCE] : FLOOD_SOURCES,
            perSource: i === 0 ? FLOOD_SOCKETS_EACH : Math.ceil(FLOOD_SOCKETS_EACH / FLOOD_SOURCES.length),
            intervalMs: 30_000,
            rampMs: 30_000,
            idleShare: 0.4,
          }),
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      let pending = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop()!;
        if (lines.length) last[i] = JSON.parse(lines[lines.length - 1]!) as FloodStats;
      });
      return child;
    });
    let nodeMax = 0;
    const sampler = setInterval(() => {
      void server.connections().then((n) => (nodeMax = Math.max(nodeMax, n)));
    }, 50);
    try {
      await sleep(6_000); // pace: the caps are full by then: ~260 idle anonymous sockets a second, each kept 10 s
      // This host's two cores are shared with whatever else runs on it: windows of the flood
      // running and paused (no new connection, no request, the ticks skipped, not made up later;
      // the sockets it holds stay) alternate, so both see the same background.
      const during: number[] = [];
      const stopped: number[] = [];
      const failedDuring = { count: 0 };
      const failedStopped = { count: 0 };
      const tell = (line: string) => floods.forEach((f) => f.stdin!.write(`${line}\n`));
      const cpu0 = process.cpuUsage();
      const attackers0 = last.reduce((t, x) => t + (x?.cpuMs ?? 0), 0);
      const t0 = performance.now();
      let cpuStopped = 0;
      let cpuRunning = 0;
      const cpuOf = async (run: () => Promise<void>) => {
        const c0 = process.cpuUsage();
        await run();
        const c = process.cpuUsage(c0);
        return (c.user + c.system) / 1000;
      };
      for (let round = 0; round < 8; round++) {
        tell('pause');
        cpuStopped += await cpuOf(async () => void stopped.push(...(await pairs(holder, 'stopped', 1_000, failedStopped))));
        tell('resume');
        cpuRunning += await cpuOf(async () => void during.push(...(await pairs(holder, 'during', 1_000, failedDuring))));
      }
      // A new API-key connection while the flood holds every slot it can.
      const newcomer = new HttpConnection('127.0.0.1', server.port, { authorization: `Bearer ${API_KEY}` });
      const late = await pairs(newcomer, 'newcomer', 300);
      newcomer.close();
      const elapsed = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const serverCpu = (cpu.user + cpu.system) / 1000 / elapsed;
      const attackersCpu = (last.reduce((t, x) => t + (x?.cpuMs ?? 0), 0) - attackers0) / elapsed;
      // What the flood delivered: each socket connects at a random moment of its first 30 s, while
      // the flood runs (6 s, then 8 windows of 1 s).
      const running = 6_000 + 8 * 1_000;
      const nominal = (FLOOD_SOCKETS * running) / 30_000;
      const anonymous = await anonymousOnce(server.port);
      const guard = server.guard();
      const stats = last.filter((x): x is FloodStats => x !== null);
      const sum = (key: keyof Omit<FloodStats, 'openBySource'>) => stats.reduce((t, x) => t + x[key], 0);
      const p50Before = median(before);
      const p50Stopped = median(stopped);
      const p50During = median(during);
      console.info(
        `flood of ${FLOOD_SOCKETS} sockets (${sum('connects')} connects, ${Math.round((100 * sum('connects')) / nominal)} % of the nominal ~680/s while running): p50 acquire+release ${p50Before.toFixed(2)} ms before it (${before.length} pairs), ` +
          `${p50Stopped.toFixed(2)} ms while it is stopped (${stopped.length}), ${p50During.toFixed(2)} ms while it runs (${during.length}); refused for want of a quorum: ${failedStopped.count} stopped, ${failedDuring.count} running; guard ${JSON.stringify(guard)}; Node counted at most ${nodeMax}; ` +
          `attackers: ${sum('connects')} connects, ${sum('requests')} requests, ${sum('answers401')} answered 401, ` +
          `${sum('closedAfter401')} closed after their 401 (slowest ${Math.max(...stats.map((x) => x.slowestCloseAfter401Ms))} ms), ` +
          `${sum('closedUnanswered')} closed unanswered (refused, evicted or idle), ${sum('openLongAfter401')} open 2 s after a 401; ` +
          `CPU over the windows: this process (server and holder) ${(serverCpu * 100).toFixed(0)} % of a core ` +
          `(${(cpuStopped / 80).toFixed(0)} % with the flood paused, ${(cpuRunning / 80).toFixed(0)} % running), the attackers ${(attackersCpu * 100).toFixed(0)} %`,
      );
      expect(stats).toHaveLength(FLOOD_PROCESSES);
      // The attack was delivered (at the lowest priority on a busy host it may fall short of nominal).
      expect(sum('connects')).toBeGreaterThan(0.4 * nominal);
      // (a) The caps hold: the guard's exact count, and Node's own (sampled every 50 ms; a refused
      // socket counts there from its accept to its close, a moment later).
      expect(guard.maxOpen).toBeLessThanOrEqual(LIMITS.maxConnections);
      expect(guard.maxPeerOpen).toBe(LIMITS.maxPerPeer); // reached by the lone address, never passed
      expect(guard.refused + guard.evicted).toBeGreaterThan(1_000); // the caps were reached, and worked
      expect(nodeMax).toBeLessThanOrEqual(LIMITS.maxConnections + 64);
      // (b) The holder: within 2× of its unattacked p50 (the windows with the flood stopped,
      // measured between those with it running), no more refused for want of a quorum (its masters
      // late by 100 ms: a stalled event loop) than without it; a newcomer served.
      expect(p50During).toBeLessThanOrEqual(2 * p50Stopped);
      expect(failedDuring.count).toBeLessThanOrEqual(failedStopped.count + 3);
      expect(late.length).toBeGreaterThan(0);
      // (c) Every 401 closed its socket, at once.
      expect(sum('answers401')).toBeGreaterThan(1_000);
      expect(sum('openLongAfter401')).toBe(0);
      expect(sum('closedAfter401')).toBeGreaterThanOrEqual(sum('answers401') - FLOOD_PROCESSES * 50); // the last ones still closing
      expect(anonymous.closed).toBe(true);
    } finally {
      clearInterval(sampler);
      for (const f of floods) f.kill('SIGTERM');
      holder.close();
    }
  }, 60_000);
});
