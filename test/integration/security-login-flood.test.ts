import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_AUTH, send, signIn, startConsoleCluster, type ConsoleCluster, type ConsoleProcess } from '../support/console-server';

/**
 * A login flood with a new username each time. Every attempt cost a
 * full scrypt (unknown users too, by design: the time of a refusal must not tell which usernames
 * exist) and the limit was per username, so 6.3 failed logins/s moved the lock service's
 * acquire+release p50 from 29.7 ms to 4,687 ms and a real login from 443 ms to 6,491 ms.
 *
 * A real console process (the lean lock service and the built Next.js app on one event loop, as in
 * production) on five masters. An API-key holder takes and releases a lock in a loop through the
 * console's HTTP lock service, unattacked and while logins with a new username each time flood in
 * from one address, then from eight (127.0.0.x on loopback: each is another client address), then
 * 100 a second from eight (the attacker a process of its own). Its p50 while attacked stays within
 * 2× of its p50 unattacked, measured in this test in windows between the attacks; the operator's
 * real login (from its trusted browser) succeeds within a bound; and a refused login costs the
 * console's process little CPU (measured alone at the end). Bounded in time (~40 s).
 */

let cc: ConsoleCluster;
let proc: ConsoleProcess;
let device: string;
beforeAll(async () => {
  cc = await startConsoleCluster({ nodes: 5, maxTtlMs: 10_000 });
  proc = await cc.start();
  device = (await signIn(proc.url, 'operator', { localAddress: '127.0.0.200' })).device;
}, 120_000);
afterAll(async () => {
  await cc?.stop();
});

/**
 * The attack: logins sent at a fixed rate whatever the console answers (an attacker does not slow
 * down when the console does), 4× the reviewer's 6.3/s (at this rate the scrypts alone would need
 * 1.5 cores), then 16× (100/s: nearly all refused, by the password-work budget or the per-address
 * limit, so what is measured is what a refused login costs the event loop the lock service answers
 * on: through Next.js it moved the p50 from 5.9 to 58.9 ms on this busy 2-core host, and login is
 * now answered before Next.js, lib/server/auth-routes). FLOOD_PER_S scales both rates (25 → 25 and
 * 100).
 */
const FLOOD_SCALE = Number(process.env.FLOOD_PER_S ?? 25) / 25;
/** How long each flood lasts; the holder's pairs are measured from its 2nd second to its 6th. */
const FLOOD_MS = 7_000;

const p = (values: number[], q: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/**
 * The API-key holder: acquire + release of its own lock, one pair after another, for `ms`. Each
 * pair's time (a pair that fails counts with its time, and in `failed`).
 */
async function lockPairs(ms: number, resource: string, failed: string[]): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const end = Date.now() + ms;
  try {
    while (Date.now() < end) {
      const started = performance.now();
      const granted = await send(proc.url, 'POST', '/api/locks', { agent, headers: CLIENT_AUTH, body: { resource, ttlMs: 5_000 } });
      if (granted.status === 200) {
        const { token } = JSON.parse(granted.body) as { token: string };
        const released = await send(proc.url, 'POST', `/api/locks/${resource}/release`, { agent, headers: CLIENT_AUTH, body: { token } });
        if (released.status !== 200) failed.push(`${resource}: release ${released.status} ${released.body.slice(0, 160)}`);
      } else failed.push(`acquire ${granted.status} ${granted.body.slice(0, 160)}`);
      times.push(performance.now() - started);
    }
  } finally {
    agent.destroy();
  }
  return times;
}

/**
 * Logins with a new username each time, `perSecond` of them a second, from `addresses` in turn, for
 * `ms`, sent by a process of its own (test/support/login-flood.mjs) at the lowest CPU priority: an
 * attacker is another machine; here it shares the two cores with the console, the masters and the
 * measuring client, and its own work (a connection per refused login) must not be measured as the
 * console's slowness, nor slow the client that measures it. How many it sent and what came back.
 */
async function flood(
  addresses: string[],
  perSecond: number,
  ms: number,
  tag: string,
): Promise<{ sent: number; statuses: Record<string, number> }> {
  const options = { port: proc.port, sources: addresses, perSecond, ms, tag };
  const child = spawn('nice', ['-n', '19', process.execPath, 'test/support/login-flood.mjs', JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`the login flood exited with ${code}: ${out}`);
  return JSON.parse(out) as { sent: number; statuses: Record<string, number> };
}

/** The operator's login from its own browser (the device cookie of an earlier sign-in), timed. */
async function operatorLogin(): Promise<number> {
  const started = performance.now();
  await signIn(proc.url, 'operator', { localAddress: '127.0.0.200', device, timeoutMs: 60_000 });
  return performance.now() - started;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The console process's CPU time so far (ms): user + system, from /proc (Linux; 100 clock ticks a second). */
function consoleCpuMs(): number {
  const fields = readFileSync(`/proc/${proc.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

describe('a login flood with a new username each time', () => {
  it("leaves the lock service's p50 within 2x of unattacked, and the operator's login within 3 s", async () => {
    const report: Record<string, unknown> = {};
    const calmFailed: string[] = [];
    const calm = [...(await lockPairs(3_000, 'flood-calm-1', calmFailed))];
    const attacked: Array<{
      name: string;
      pairs: number[];
      failed: string[];
      login: number;
      sent: number;
      nominal: number;
      statuses: Record<string, number>;
    }> = [];
    const eight = (from: number) => Array.from({ length: 8 }, (_, i) => `127.0.0.${from + i}`);
    for (const [name, addresses, perSecond] of [
      ['one address', ['127.0.0.31'], 25 * FLOOD_SCALE],
      ['eight addresses', eight(41), 25 * FLOOD_SCALE],
      ['eight addresses, 100 a second', eight(51), 100 * FLOOD_SCALE],
    ] as const) {
      const failed: string[] = [];
      const tag = name.replace(/\W+/g, '-');
      const flooding = flood([...addresses], perSecond, FLOOD_MS, tag);
      await sleep(1_000); // pace: the flood is under way
      const [pairs, login] = await Promise.all([
        lockPairs(5_000, `flood-${tag}`, failed),
        // pace: the operator signs in mid-flood
        sleep(2_500).then(operatorLogin, (err: unknown) => ({ error: String(err) })),
      ]);
      const { sent, statuses } = await flooding;
      attacked.push({
        name,
        pairs,
        failed,
        login: typeof login === 'number' ? login : Infinity,
        sent,
        nominal: (perSecond * FLOOD_MS) / 1000,
        statuses,
      });
      report[name] = {
        p50: p(pairs, 0.5),
        p95: p(pairs, 0.95),
        pairs: pairs.length,
        failed,
        login,
        sent,
        statuses,
      };
      calm.push(...(await lockPairs(2_000, 'flood-calm-2', calmFailed)));
    }
    report.calm = { p50: p(calm, 0.5), p95: p(calm, 0.95), pairs: calm.length, failed: calmFailed };

    // What one refused login costs the console, in CPU (which a busy host does not inflate as it
    // does latency): 127.0.0.31 is over its limit since the first flood, so every login from it is
    // refused (429) before any password work; nothing else runs meanwhile but the console's own
    // background work, measured just before and taken off.
    const idle = { cpu: consoleCpuMs(), at: performance.now() };
    // pace: 1 s of idle CPU, the background to take off
    await sleep(1_000);
    const idleRate = (consoleCpuMs() - idle.cpu) / (performance.now() - idle.at);
    const start = { cpu: consoleCpuMs(), at: performance.now() };
    const refused = await flood(['127.0.0.31'], 100 * FLOOD_SCALE, 2_000, 'refused-only');
    const cpuPerRefusal = (consoleCpuMs() - start.cpu - idleRate * (performance.now() - start.at)) / refused.sent;
    report.refused = { ...refused, cpuMsEach: cpuPerRefusal, idleCpuMsPerS: idleRate * 1000 };
    console.log(JSON.stringify(report));
    for (const phase of attacked) {
      // The attack was made: the nominal rate sent (at the lowest priority, it may lag, then catch
      // up), and nearly all of it answered (status 0: no answer within 60 s).
      expect(phase.sent, `logins sent in the flood from ${phase.name}`).toBeGreaterThanOrEqual(0.95 * phase.nominal);
      expect(phase.statuses['0'] ?? 0, `logins unanswered in the flood from ${phase.name}`).toBeLessThanOrEqual(phase.sent / 100);
      expect(p(phase.pairs, 0.5), `lock p50 (ms) under a flood from ${phase.name}`).toBeLessThanOrEqual(2 * p(calm, 0.5));
      // A pair that fails (a node deadline of 100 ms missed by a stalled event loop) counts in the
      // p50 with its time; the stalls a busy shared host has anyway stay rare (before: 5 of 26).
      expect(phase.failed.length, `failed pairs under a flood from ${phase.name}`).toBeLessThanOrEqual(Math.ceil(phase.pairs.length / 50));
      expect(phase.login, `the operator's login (ms) under a flood from ${phase.name}`).toBeLessThan(3_000);
    }
    expect(refused.statuses['429'], 'logins refused from an address over its limit').toBe(refused.sent);
    // Through Next.js 4.3 ms each (its routing, Web Request/Response, Node's HTTP objects); before
    // it, 1.6 ms (a connection accepted and closed, Node's parser, the checks, the answer).
    expect(cpuPerRefusal, "the console's CPU per refused login (ms)").toBeLessThan(3);
  }, 90_000);
});
