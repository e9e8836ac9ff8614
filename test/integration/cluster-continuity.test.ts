import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterSupervisor, type ClusterOptions } from '../../lib/cluster';
import type { Persistence } from '../../lib/cluster/persistence';
import { QuorumUnavailableError, readEpoch, Redlock, serverRunId, type Vote } from '@redlock-console/redlock';
import { waitFor } from '../support/cluster';

// Graceful stops lose nothing: a node the supervisor stopped gracefully (SHUTDOWN with
// its persistence flushed, exit code 0) and starts again unchanged carries its sentinel over to the
// new process instead of sitting out a restart quarantine; a crash never does.

const PREFIX = 'rl:';
const MAX_TTL = 60_000;
const roots: string[] = [];
const open: Array<{ close(): Promise<unknown> | void }> = [];

afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function dataRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'redlock-continuity-'));
  roots.push(dir);
  return dir;
}

async function supervise(root: string, persistence: ClusterOptions['persistence'], nodes = 5): Promise<ClusterSupervisor> {
  const s = await ClusterSupervisor.start({ dataRoot: root, nodes, persistence, keyPrefix: PREFIX, maxTtlMs: MAX_TTL, lifeline: false });
  open.push({ close: () => s.shutdown() });
  return s;
}

/** A Redlock with the console's prefix and ceiling, over every node or (to read one node's vote) over some. */
function redlock(s: ClusterSupervisor, ids?: number[]): Redlock {
  const urls = ids ? ids.map((id) => s.urls()[id - 1]!) : s.urls();
  // A generous per-node timeout: the first grant on a connection also checks the node, on a shared machine.
  const r = new Redlock(urls, { keyPrefix: PREFIX, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000 });
  open.push({ close: () => r.quit() });
  return r;
}

function direct(s: ClusterSupervisor, id: number): Redis {
  const c = new Redis(s.directUrls()[id - 1]!, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  c.on('error', () => undefined);
  open.push({ close: () => c.disconnect() });
  return c;
}

const marker = (s: ClusterSupervisor, id: number) => join(s.node(id).dataDir, 'continuity.json');

/** One node's vote on an acquire, once it answers at all (a node that has just started may refuse for a moment). */
async function voteOf(s: ClusterSupervisor, id: number, resource: string): Promise<Vote> {
  const r = redlock(s, [id]);
  let vote: Vote | undefined;
  await waitFor(
    async () => {
      const outcome = await r.acquire(resource, 1_000).catch((e: unknown) => {
        if (e instanceof QuorumUnavailableError) return e;
        throw e;
      });
      if (!(outcome instanceof QuorumUnavailableError)) await outcome.release();
      vote = outcome.votes[0];
      return vote?.reason !== 'error';
    },
    5_000,
    `node ${id} to answer`,
  );
  return vote!;
}

describe('graceful stops lose nothing (supervisor continuity)', () => {
  it('all five stopped gracefully and started again by a new supervisor: a Redlock with the console prefix acquires at once, and the sentinels name the new processes', async () => {
    const root = dataRoot();
    const modes: Persistence[] = ['aof-always', 'aof-everysec', 'rdb', 'aof-always', 'rdb'];
    const first = await supervise(root, modes);
    const before = redlock(first);
    await (await before.acquire('warm-up', 1_000)).release();
    const oldRunIds = await Promise.all([1, 2, 3, 4, 5].map((id) => serverRunId(direct(first, id))));
    await first.shutdown();
    for (let id = 1; id <= 5; id++) {
      const recorded = JSON.parse(readFileSync(marker(first, id), 'utf8')) as Record<string, unknown>;
      expect(recorded).toMatchObject({ runId: oldRunIds[id - 1], persistence: modes[id - 1], keyPrefix: PREFIX });
    }

    const second = await supervise(root, modes);
    const outcomes = second.nodes().map((n) => n.continuity);
    expect(outcomes.map((o) => o?.adopted)).toEqual([true, true, true, true, true]);
    for (let id = 1; id <= 5; id++) expect(existsSync(marker(second, id))).toBe(false); // consumed once
    const after = redlock(second);
    // The first attempt (retryCount 0) is granted: nobody sits out the 60 s quarantine.
    const lock = await after.acquire('right-after-restart', 5_000);
    expect(lock.votes.filter((v) => v.reason === 'quarantined')).toEqual([]);
    await lock.release();
    for (let id = 1; id <= 5; id++) {
      const client = direct(second, id);
      const epoch = await readEpoch(client, PREFIX);
      expect(epoch).toMatchObject({ runId: await serverRunId(client), prevRunId: oldRunIds[id - 1] });
      expect(epoch!.runId).not.toBe(oldRunIds[id - 1]);
      expect(epoch!.quarantineUntil).toBeLessThanOrEqual(epoch!.createdAt);
    }
  }, 60_000);

  it('an adopted restart stays adopted after the first check, however many commands the stopped process had run', async () => {
    const s = await supervise(dataRoot(), 'aof-always', 1);
    // The stopped process's counters (total_commands_processed, evicted_keys) are its own: a new
    // process starts from zero, and that must not read as a CONFIG RESETSTAT hiding evictions.
    const busy = direct(s, 1);
    for (let i = 0; i < 500; i++) await busy.ping();
    await (await redlock(s).acquire('before', 1_000)).release();
    expect((await s.restart(1)).continuity).toMatchObject({ adopted: true });
    expect(await voteOf(s, 1, 'after')).toMatchObject({ vote: 'for', reason: 'ok' });
    expect((await readEpoch(direct(s, 1), PREFIX))?.cause).toBeUndefined();
  }, 30_000);

  it('a crash (SIGKILL) and start sits out the quarantine: the node votes quarantined with cause restart, and a stale marker does not survive the crash', async () => {
    const s = await supervise(dataRoot(), 'aof-always', 3);
    const r = redlock(s);
    await (await r.acquire('before-crash', 1_000)).release();
    // A marker that should not be there (as a graceful stop of this very process would have written it).
    const runId = await serverRunId(direct(s, 2));
    writeFileSync(
      marker(s, 2),
      JSON.stringify({ version: 1, runId, persistence: 'aof-always', keyPrefix: PREFIX, quarantineUntil: 0, stoppedAt: Date.now() }),
    );
    await s.crash(2);
    expect(existsSync(marker(s, 2))).toBe(false);
    expect(s.node(2).resumable).toBeNull();
    const status = await s.start(2);
    expect(status.continuity).toMatchObject({ adopted: false, code: 'no-marker' });
    const vote = await voteOf(s, 2, 'after-crash');
    expect(vote).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(vote.quarantineUntil).toBeGreaterThan(Date.now() + MAX_TTL - 5_000);
    expect(await readEpoch(direct(s, 2), PREFIX)).toMatchObject({ cause: 'restart', prevRunId: runId });
  }, 30_000);

  it('a restart with another persistence mode is not adopted: the node sits out maxTtl, and the supervisor says why', async () => {
    const s = await supervise(dataRoot(), 'aof-always', 3);
    const r = redlock(s);
    await (await r.acquire('before', 1_000)).release();
    const events: unknown[] = [];
    s.on('continuity', (id: number, outcome: unknown) => events.push({ id, outcome }));
    await s.stop(3);
    expect(s.node(3).resumable).toBe('aof-always');
    const status = await s.start(3, 'aof-everysec');
    expect(status.resumable).toBeNull();
    expect(status.continuity).toMatchObject({ adopted: false, code: 'persistence-changed' });
    expect(status.continuity!.reason).toMatch(/aof-always.*aof-everysec/);
    expect(events).toEqual([{ id: 3, outcome: status.continuity }]);
    expect(existsSync(marker(s, 3))).toBe(false);
    expect(await voteOf(s, 3, 'after')).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(await readEpoch(direct(s, 3), PREFIX)).toMatchObject({ cause: 'restart' });
  }, 30_000);

  it('persistence none is never marked continuous; a graceful restart with aof-always is adopted while clients keep knocking', async () => {
    const s = await supervise(dataRoot(), ['none', 'aof-always', 'aof-always']);
    const r = redlock(s);
    await (await r.acquire('before', 1_000)).release();
    await s.stop(1);
    expect(s.node(1).lastExit).toMatchObject({ code: 0, signal: null });
    expect(existsSync(marker(s, 1))).toBe(false);

    // A client acquiring in a loop through node 2's proxy while it restarts must not quarantine it
    // first: the sentinel the stopped process had is carried over as it was.
    const sentinel = await readEpoch(direct(s, 2), PREFIX);
    // From the moment the new process is spawned, a client retrying every millisecond through node 2's
    // proxy: it reaches the server as soon as it listens, before the supervisor's own PING does.
    // And one raw connection opened at the spawn: the proxy holds it until the restart is adopted.
    let knocking = true;
    let knocks: Promise<void> = Promise.resolve();
    let held: Promise<{ reply: string; at: number }> = Promise.resolve({ reply: 'never opened', at: 0 });
    let adoptedAt = 0;
    s.once('continuity', () => (adoptedAt = Date.now()));
    s.once('node-up', () => {
      held = new Promise((resolve) => {
        // AUTH with the sandbox password, then PING: the PING's reply is what counts.
        const password = new URL(s.urls()[1]!).password;
        let text = '';
        const socket = connect({ host: '127.0.0.1', port: s.node(2).proxyPort! }, () => socket.write(`AUTH ${password}\r\nPING\r\n`));
        socket.on('data', (d) => {
          text += d.toString();
          const lines = text.split('\r\n');
          if (lines.length < 3) return;
          resolve({ reply: lines[0] === '+OK' ? lines[1]! : lines[0]!, at: Date.now() });
          socket.destroy();
        });
        socket.on('close', () => resolve({ reply: 'closed', at: Date.now() }));
        socket.on('error', () => undefined);
      });
      const eager = new Redis(s.urls()[1]!, {
        retryStrategy: () => 1,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        connectTimeout: 500,
      });
      eager.on('error', () => undefined);
      open.push({ close: () => eager.disconnect() });
      const knocker = new Redlock([eager], { keyPrefix: PREFIX, maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000 });
      open.push({ close: () => knocker.quit() });
      knocks = (async () => {
        for (let i = 0; knocking; i++) {
          await knocker.acquire(`knock-${i}`, 1_000).then(
            (l) => l.release(),
            () => undefined,
          );
          // pace: knocks spread over the restart
          await new Promise((res) => setTimeout(res, 1));
        }
      })();
    });
    const status = await s.restart(2);
    knocking = false;
    await knocks;
    expect(status.continuity).toMatchObject({ adopted: true, code: 'adopted' });
    const answer = await held;
    expect(answer.reply).toBe('+PONG');
    expect(answer.at).toBeGreaterThanOrEqual(adoptedAt);
    expect(await voteOf(s, 2, 'after')).toMatchObject({ vote: 'for', reason: 'ok' });
    const adopted = await readEpoch(direct(s, 2), PREFIX);
    expect(adopted).toMatchObject({
      createdAt: sentinel!.createdAt,
      quarantineUntil: sentinel!.quarantineUntil,
      prevRunId: sentinel!.runId,
    });
    expect(adopted!.origin).toMatch(/graceful restart adopted/);
  }, 30_000);
});
