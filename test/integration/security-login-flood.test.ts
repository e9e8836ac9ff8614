import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_AUTH, send, signIn, startConsoleCluster, type ConsoleCluster, type ConsoleProcess } from '../support/console-server';

/**
 * Issue 38, finding 2 (high): a login flood with a new username each time. Every attempt cost a
 * full scrypt (unknown users too, by design: the time of a refusal must not tell which usernames
 * exist) and the limit was per username, so 6.3 failed logins/s moved the lock service's
 * acquire+release p50 from 29.7 ms to 4,687 ms and a real login from 443 ms to 6,491 ms.
 *
 * A real console process (the lean lock service and the built Next.js app on one event loop, as in
 * production) on five masters. An API-key holder takes and releases a lock in a loop through the
 * console's HTTP lock service, unattacked and while logins with a new username each time flood in
 * from one address, then from eight (127.0.0.x on loopback: each is another client address). Its
 * p50 while attacked stays within 2× of its p50 unattacked, measured in this test; the operator's
 * real login (from its trusted browser) succeeds within a bound. Bounded in time (~30 s).
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
 * down when the console does), 4× the reviewer's 6.3/s: at this rate the scrypts alone would need
 * 1.5 cores. What is left of a refused login is what any request through Next.js costs (routing,
 * Web Request/Response), the same for a 400 or a page: at 50/s on a 2-core host shared with the
 * masters that cost alone moves the p50 (docs/security.md, still open), which is the HTTP front's
 * (connection caps) and the data-plane split's to bound, not the password work's.
 */
const FLOOD_PER_S = Number(process.env.FLOOD_PER_S ?? 25);

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

/** Logins with a new username each time, FLOOD_PER_S of them a second, from `addresses` in turn, for `ms`. */
async function flood(addresses: string[], ms: number, tag: string): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const agents = addresses.map(() => new Agent({ keepAlive: true, maxSockets: 64 }));
  const sent: Array<Promise<void>> = [];
  const started = Date.now();
  try {
    for (let i = 0; Date.now() - started < ms; i++) {
      const a = i % addresses.length;
      sent.push(
        send(proc.url, 'POST', '/api/auth/login', {
          agent: agents[a],
          localAddress: addresses[a],
          body: { username: `flood-${tag}-${i}`, password: 'guess-guess-guess' },
          timeoutMs: 60_000,
        })
          .catch(() => ({ status: 0 }))
          .then((res) => void statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)),
      );
      await sleep(Math.max(0, started + ((i + 1) * 1000) / FLOOD_PER_S - Date.now()));
    }
    await Promise.all(sent);
  } finally {
    agents.forEach((a) => a.destroy());
  }
  return statuses;
}

/** The operator's login from its own browser (the device cookie of an earlier sign-in), timed. */
async function operatorLogin(): Promise<number> {
  const started = performance.now();
  await signIn(proc.url, 'operator', { localAddress: '127.0.0.200', device, timeoutMs: 60_000 });
  return performance.now() - started;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a login flood with a new username each time', () => {
  it("leaves the lock service's p50 within 2x of unattacked, and the operator's login within 3 s", async () => {
    const report: Record<string, unknown> = {};
    const calmFailed: string[] = [];
    const calm = [...(await lockPairs(4_000, 'flood-calm-1', calmFailed))];
    const attacked: Array<{ name: string; pairs: number[]; failed: string[]; login: number }> = [];
    for (const [name, addresses] of [
      ['one address', ['127.0.0.31']],
      ['eight addresses', Array.from({ length: 8 }, (_, i) => `127.0.0.${41 + i}`)],
    ] as const) {
      const failed: string[] = [];
      const flooding = flood([...addresses], 9_000, name.replace(' ', '-'));
      await sleep(1_000); // the flood is under way
      const [pairs, login] = await Promise.all([
        lockPairs(7_000, `flood-${name.replace(' ', '-')}`, failed),
        sleep(3_000).then(operatorLogin, (err: unknown) => ({ error: String(err) })),
      ]);
      const statuses = await flooding;
      attacked.push({ name, pairs, failed, login: typeof login === 'number' ? login : Infinity });
      report[name] = {
        p50: p(pairs, 0.5),
        p95: p(pairs, 0.95),
        pairs: pairs.length,
        failed,
        login,
        statuses: Object.fromEntries(statuses),
      };
      calm.push(...(await lockPairs(3_000, 'flood-calm-2', calmFailed)));
    }
    report.calm = { p50: p(calm, 0.5), p95: p(calm, 0.95), pairs: calm.length, failed: calmFailed };
    console.log(JSON.stringify(report));
    for (const phase of attacked) {
      expect(p(phase.pairs, 0.5), `lock p50 (ms) under a flood from ${phase.name}`).toBeLessThanOrEqual(2 * p(calm, 0.5));
      // A pair that fails (a node deadline of 100 ms missed by a stalled event loop) counts in the
      // p50 with its time; the stalls a busy shared host has anyway stay rare (before: 5 of 26).
      expect(phase.failed.length, `failed pairs under a flood from ${phase.name}`).toBeLessThanOrEqual(Math.ceil(phase.pairs.length / 50));
      expect(phase.login, `the operator's login (ms) under a flood from ${phase.name}`).toBeLessThan(3_000);
    }
  }, 90_000);
});
