import { describe, expect, it, vi } from 'vitest';
import { sendGrant } from '../../src/grant';
import { grantPlan, nodeProbes, probeScript } from '../../src/grant-plan';
import type { GrantReply } from '../../src/grant-verdict';
import type { BatchGroup, LockNode, Reply } from '../../src/node';
import { lockValue } from '../../src/value';

// The command layout and the verdicts of grant.ts / grant-group.ts, with the node's connection
// replaced by a recorder that answers each command by its kind. (What Redis does with these
// commands is tested on real nodes: redlock-core, redlock-quarantine and redlock-fencing.)

const probes = nodeProbes('t:epoch', 't:fence', 60_000, '2', 1_000, 1);
const plan = (fenced: boolean, token = 'tok') =>
  grantPlan([`t:lock:${token}`], lockValue(token, '{"owner":"o"}'), 1_000, { quarantine: true, fenced, probes });

/**
 * MULTI / EXEC around the fast probe's PROOF (SCRIPT EXISTS), PROBE (its HMGET), ANCHOR (EXISTS of
 * the anchor), STATS (INFO stats) and TIME; WATCH / UNWATCH of the anchor; FAST: the script's own
 * fast read; CHECK: a check.
 */
type Kind = 'TIME' | 'SET' | 'MULTI' | 'PROOF' | 'PROBE' | 'ANCHOR' | 'STATS' | 'EXEC' | 'WATCH' | 'UNWATCH' | 'FAST' | 'CHECK';
type Answer = (kind: Kind, text: string) => unknown;

function kindOf(text: string): Kind {
  // TIME, or TIME inside Lua (scripts/time.lua: a node still connecting, or a proxy-safe one).
  if (text.includes('\r\nTIME\r\n') || text.includes("redis.call('TIME')")) return 'TIME';
  if (text.includes('\r\nSET\r\n')) return 'SET';
  if (text.includes('\r\nMULTI\r\n')) return 'MULTI';
  if (text.includes('\r\nEXEC\r\n')) return 'EXEC';
  if (text.includes('\r\nSCRIPT\r\n$6\r\nEXISTS\r\n')) return 'PROOF';
  if (text.includes('\r\nHMGET\r\n')) return 'PROBE';
  if (text.includes('\r\nEXISTS\r\n')) return 'ANCHOR';
  if (text.includes('\r\nINFO\r\n')) return 'STATS';
  if (text.includes('\r\nUNWATCH\r\n')) return 'UNWATCH';
  if (text.includes('\r\nWATCH\r\n')) return 'WATCH';
  if (text.includes(probeScript('t:epoch', '2', 60_000).sha)) return text.includes('t:anchor\r\n$1\r\n1\r\n') ? 'CHECK' : 'FAST';
  throw new Error(`unexpected command ${text}`);
}

/** A probe's read (scripts/probe.lua FIELDS): createdAt, quarantineUntil, runId, maxTtlMs, register. */
const probeReply = (createdAt: string | null, until: string | null, register = '7', runId = 'r1') => [
  createdAt,
  until,
  runId,
  '60000',
  register,
];

/** A check's reply (scripts/probe.lua): the read, then runIdNow, policy, started, cause, TIME and the anchor. */
const checkReply = (read: unknown[], runIdNow: string, started = 0, cause = '') => [
  ...read,
  runIdNow,
  'noeviction',
  started,
  cause,
  '1000',
  '0',
  1,
  '',
];

/**
 * A node whose commands are recorded batch by batch: flush() seals the batch's groups, as
 * LockNode's flush does, and answers every command in order (an Error answer fails the command).
 */
function recorder(wantTime: boolean, answer: Answer) {
  const batches: string[][] = [];
  let queue: Array<[string, Reply]> = [];
  let groups = new Map<object, BatchGroup>();
  const node = {
    index: 0,
    quarantine: { wantTime, overCreatedAt: null as string | null, overUntil: null as string | null },
    probeByProof: true,
    // Its WATCH on the anchor was armed by the last check (grant-group.ts: the rollback detector).
    watch: 'armed' as 'none' | 'armed' | 'untrusted',
    get watching() {
      return node.probeByProof;
    },
    // No clock references kept (the clock check has tests of its own below and in clock-check).
    get clock() {
      return { last: null, base: null };
    },
    noteCheckAnchor: () => undefined,
    armAfterCheck() {
      queue.push([probes.watch.toString(), () => (node.watch = 'armed')]);
    },
    armAfterTransaction(_: unknown, anchorSeen: () => boolean) {
      queue.push([probes.watch.toString(), () => (node.watch = anchorSeen() ? 'armed' : 'untrusted')]);
    },
    unreserve: () => undefined,
    // This client checked the node (process r1, noeviction) a moment ago: no check is due.
    checks: {
      runId: 'r1' as string | null,
      policy: 'noeviction' as string | null,
      checkedAt: 0,
      starting: false,
      duplicateOf: null as number | null,
    },
    checkDue: () => false,
    checked: 0,
    forced: [] as string[],
    runCheck(_probes: unknown, _withSource?: boolean, call?: { args: readonly unknown[] }) {
      node.checked++;
      const cause = call ? String(call.args.at(-1)) : '';
      if (cause) node.forced.push(cause);
      const reply = answer('CHECK', cause);
      const now = performance.now();
      return reply instanceof Error ? Promise.reject(reply) : Promise.resolve({ reply, sentAt: now, readAt: now });
    },
    connecting: false,
    groupOf<G extends BatchGroup>(key: object, create: () => G): G {
      if (!groups.has(key)) groups.set(key, create());
      return groups.get(key) as G;
    },
    reserve: () => true,
    sendReserved(payload: Buffer, reply: Reply) {
      queue.push([payload.toString(), reply]);
    },
    callBatch(commands: Buffer[], reply: Reply) {
      const texts = commands.map((c) => c.toString());
      batches.push(texts);
      reply(
        null,
        texts.map((t) => answer(kindOf(t), t)),
      );
    },
    flush() {
      for (const group of groups.values()) group.seal();
      groups = new Map();
      const batch = queue;
      queue = [];
      batches.push(batch.map(([text]) => text));
      // Inside MULTI … EXEC the commands answer QUEUED (or their error, which aborts the EXEC),
      // and EXEC answers their replies: what Redis does.
      let queued: unknown[] | null = null;
      let aborted = false;
      for (const [text, reply] of batch) {
        const kind = kindOf(text);
        let value: unknown;
        if (kind === 'MULTI') {
          queued = [];
          value = 'OK';
        } else if (kind === 'EXEC') {
          value = queued === null ? new Error('ERR EXEC without MULTI') : aborted ? new Error('EXECABORT Transaction discarded') : queued;
          queued = null;
          aborted = false;
        } else {
          value = answer(kind, text);
          if (queued !== null) {
            if (value instanceof Error) aborted = true;
            else queued.push(value);
            value = value instanceof Error ? value : 'QUEUED';
          }
        }
        if (value instanceof Error) reply(value, undefined);
        else reply(null, value);
      }
    },
  };
  return { node, batches, kinds: () => batches.map((b) => b.map(kindOf)) };
}

/** Send the grants in one batch; their replies (or errors), in order. */
type Recorder = ReturnType<typeof recorder>['node'];

/** The recorder as the LockNode it stands in for. */
const asNode = (node: Recorder) => node as unknown as LockNode;

function grants(node: Recorder, plans: ReturnType<typeof plan>[]): Array<GrantReply | Error> {
  const out: Array<GrantReply | Error> = [];
  plans.forEach((p, i) =>
    sendGrant(asNode(node), p, (err, value) => {
      out[i] = err ?? (value as GrantReply);
    }),
  );
  node.flush();
  return out;
}

const answers =
  (over: Partial<Record<Kind, unknown>>): Answer =>
  (kind) =>
    over[kind] ??
    (
      {
        TIME: ['1000', '0'],
        SET: null,
        PROOF: [1],
        PROBE: probeReply('1', '1'),
        ANCHOR: 1,
        STATS: '# Stats\r\nevicted_keys:0\r\ntotal_commands_processed:10\r\n',
        FAST: [...probeReply('1', '1'), '', '1000', '0', ''],
        WATCH: 'OK',
        UNWATCH: 'OK',
        CHECK: checkReply(probeReply('1', '1'), 'r1'),
      } as Record<Kind, unknown>
    )[kind];

describe('the grant batch (src/grant.ts, grant-group.ts)', () => {
  it('reads TIME before the SET and the probe (sentinel and fence register) after it', () => {
    const { node, batches, kinds } = recorder(true, answers({}));
    expect(grants(node, [plan(true)])).toEqual([[1, 7]]);
    expect(kinds()).toEqual([['TIME', 'SET', 'MULTI', 'PROOF', 'PROBE', 'ANCHOR', 'STATS', 'TIME', 'EXEC', 'WATCH']]);
    // One SET writes the token and the metadata, in one value: `<token> <json>`.
    expect(batches[0]![1]).toMatch(/SET[\s\S]*t:lock:tok[\s\S]*tok \{"owner":"o"\}[\s\S]*NX[\s\S]*GET[\s\S]*PX/);
    expect(batches[0]![4]).toContain('t:epoch');
  });

  it('the grants of one batch share one TIME before them and one probe after them all', () => {
    const { node, kinds } = recorder(true, answers({}));
    const replies = grants(node, [plan(true, 'a'), plan(false, 'b'), plan(true, 'c')]);
    expect(kinds()).toEqual([['TIME', 'SET', 'SET', 'SET', 'MULTI', 'PROOF', 'PROBE', 'ANCHOR', 'STATS', 'TIME', 'EXEC', 'WATCH']]);
    // Every fenced member gets the register read after its SET; the unfenced one none.
    expect(replies).toEqual([
      [1, 7],
      [1, 0],
      [1, 7],
    ]);
    const unfenced = recorder(false, answers({}));
    grants(unfenced.node, [plan(false, 'a'), plan(false, 'b')]);
    expect(unfenced.kinds()).toEqual([['SET', 'SET', 'MULTI', 'PROOF', 'PROBE', 'ANCHOR', 'STATS', 'TIME', 'EXEC', 'WATCH']]);
  });

  it('a quarantine is over only for the grants whose SET ran after the TIME that says so', () => {
    // quarantineUntil 2,000,000 ms; TIME says 2,000.000 s: over. The node thought it was not
    // quarantined when the first grant was sent (no TIME), then learned it might be.
    const { node, kinds } = recorder(false, answers({ TIME: ['2000', '0'], PROBE: probeReply('1000', '2000000') }));
    const out: Array<GrantReply | Error> = [];
    sendGrant(asNode(node), plan(false, 'early'), (err, v) => out.push(err ?? (v as GrantReply)));
    node.quarantine.wantTime = true;
    sendGrant(asNode(node), plan(false, 'late'), (err, v) => out.push(err ?? (v as GrantReply)));
    sendGrant(asNode(node), plan(false, 'later'), (err, v) => out.push(err ?? (v as GrantReply)));
    node.flush();
    expect(kinds()).toEqual([['SET', 'TIME', 'SET', 'SET', 'MULTI', 'PROOF', 'PROBE', 'ANCHOR', 'STATS', 'TIME', 'EXEC', 'WATCH']]);
    // The first SET may have run inside the quarantine: it votes quarantined, even though the
    // node then remembers the quarantine as over (the later members were judged after it).
    expect(out).toEqual([
      [2, 2_000_000, null, false],
      [1, 0],
      [1, 0],
    ]);
    expect(node.quarantine).toMatchObject({ wantTime: false, overCreatedAt: '1000', overUntil: '2000000' });
    // The same quarantine, remembered as over: no TIME in the next batch, and the node votes for.
    expect(grants(node, [plan(false)])).toEqual([[1, 0]]);
    expect(kinds()[1]).toEqual(['SET', 'MULTI', 'PROOF', 'PROBE', 'ANCHOR', 'STATS', 'TIME', 'EXEC', 'WATCH']);
  });

  it('a TIME before the end of the quarantine leaves it in force and asks for the time again', () => {
    const before = recorder(true, answers({ TIME: ['1999', '999000'], PROBE: probeReply('1000', '2000000') }));
    expect(grants(before.node, [plan(false)])).toEqual([[2, 2_000_000, null, false]]);
    expect(before.node.quarantine.wantTime).toBe(true);
    // Without a TIME reply a possibly quarantined node votes quarantined and asks for the time next.
    const untimed = recorder(false, answers({ PROBE: probeReply('1000', '2000000') }));
    expect(grants(untimed.node, [plan(false)])).toEqual([[2, 2_000_000, null, false]]);
    expect(untimed.node.quarantine.wantTime).toBe(true);
  });

  it('a held key answers its holder; fenced grants carry the register', () => {
    // The holder's value carries its metadata after the token; the vote names the token alone.
    expect(grants(recorder(false, answers({ SET: 'other-token {"owner":"x y"}' })).node, [plan(false)])).toEqual([
      [0, 1, 'other-token', '{"owner":"x y"}'],
    ]);
    expect(grants(recorder(false, answers({ SET: 'bare-token' })).node, [plan(false)])).toEqual([[0, 1, 'bare-token', null]]);
    expect(grants(recorder(false, answers({ PROBE: probeReply('1', '1', '41') })).node, [plan(true)])).toEqual([[1, 41]]);
  });

  it('a probe that cannot be trusted as it is gets a check before any member is judged, and the check decides', async () => {
    const settle = async (node: Recorder, plans: ReturnType<typeof plan>[]) => {
      const out = grants(node, plans);
      // pace: one turn of the event loop: what the node sends then is part of the answer
      await new Promise((resolve) => setTimeout(resolve, 0));
      return out;
    };
    // A sentinel of another process (another client found a restart first): check; it reports the
    // quarantine the restart started.
    const restarted = recorder(
      false,
      answers({
        PROBE: probeReply('5', '9000000', '7', 'r2'),
        CHECK: checkReply(probeReply('5', '9000000', '7', 'r2'), 'r2', 0, 'restart'),
      }),
    );
    expect(await settle(restarted.node, [plan(false)])).toEqual([[2, 9_000_000, 'restart', false]]);
    expect(restarted.node.checked).toBe(1);
    expect(restarted.node.checks.runId).toBe('r2');
    // No sentinel: the check starts the quarantine (this call found the loss).
    const lost = recorder(
      false,
      answers({
        PROBE: probeReply(null, null, '0', 'r1'),
        CHECK: checkReply(probeReply('5', '60005', '5000', 'r1'), 'r1', 1, 'data-loss'),
      }),
    );
    expect(await settle(lost.node, [plan(false)])).toEqual([[2, 60_005, 'data-loss', true]]);
    // A process this client never checked (a reconnect): checked first, and then it may vote.
    const fresh = recorder(false, answers({}));
    fresh.node.checks.runId = null;
    expect(await settle(fresh.node, [plan(true)])).toEqual([[1, 7]]);
    expect(fresh.node.checked).toBe(1);
    // The probe is not in the process's script cache (a restart behind a proxy that kept our
    // socket, a SCRIPT FLUSH): the proof fails, and the check goes out at once, with the script's
    // source; the read that came with the failed proof is not used.
    const flushed = recorder(false, answers({ PROOF: [0], PROBE: probeReply('1', '1', '99', 'r1') }));
    expect(await settle(flushed.node, [plan(false, 'a'), plan(true, 'b')])).toEqual([
      [1, 0],
      [1, 7],
    ]);
    expect(flushed.node.checked).toBe(1);
    expect(flushed.node.probeByProof).toBe(true);
    // A node (a proxy) that refuses SCRIPT: checked now, and its next fast probe is the script's own read.
    const noScript = recorder(false, answers({ PROOF: new Error("ERR unknown command 'SCRIPT'") }));
    expect(await settle(noScript.node, [plan(false)])).toEqual([[1, 0]]);
    expect(noScript.node.checked).toBe(1);
    expect(noScript.node.probeByProof).toBe(false);
    expect(grants(noScript.node, [plan(false)])).toEqual([[1, 0]]);
    expect(noScript.kinds().at(-1)).toEqual(['SET', 'FAST']);
    expect(noScript.batches.at(-1)![1]).toContain('EVALSHA');
    // A failed check fails every member that needed it.
    const down = recorder(false, answers({ PROBE: probeReply('1', '1', '7', 'r9'), CHECK: new Error('LOADING') }));
    expect((await settle(down.node, [plan(false)])).map(String)).toEqual(['Error: LOADING']);
  });

  it('an evicting node and a node with another ceiling vote against, each with its reason', () => {
    const evicting = recorder(false, answers({}));
    evicting.node.checks.policy = 'allkeys-lru';
    expect(grants(evicting.node, [plan(false)])).toEqual([[4, 'unsafe-eviction', expect.stringContaining('allkeys-lru'), 60_000]]);
    const other = recorder(false, answers({ PROBE: ['1', '1', 'r1', '15000', '7'] }));
    expect(grants(other.node, [plan(false)])).toEqual([[4, 'ceiling-mismatch', expect.stringContaining('15000'), 15_000]]);
  });

  it('a failed read fails every grant that needs it; a failed grant fails only itself', () => {
    const probeDown = recorder(false, answers({ PROBE: new Error('LOADING') }));
    expect(grants(probeDown.node, [plan(false, 'a'), plan(true, 'b')]).map(String)).toEqual(['Error: LOADING', 'Error: LOADING']);
    const oneDown = recorder(false, (kind, text) =>
      kind === 'SET' && text.includes('t:lock:b') ? new Error('OOM') : answers({})(kind, text),
    );
    expect(
      grants(oneDown.node, [plan(false, 'a'), plan(false, 'b'), plan(false, 'c')]).map((r) => (r instanceof Error ? r.message : r)),
    ).toEqual([[1, 0], 'OOM', [1, 0]]);
  });

  it('a node still connecting gets each grant as a batch of its own: [TIME], SET, then a check', async () => {
    const { node, kinds } = recorder(true, answers({}));
    node.connecting = true;
    let reply: unknown;
    sendGrant(asNode(node), plan(true), (err, value) => (reply = err ?? value));
    await vi.waitFor(() => expect(reply).toEqual([1, 7]));
    expect(kinds()).toEqual([['TIME', 'SET']]);
    expect(node.checked).toBe(1);
  });

  it('one member whose callback throws does not keep the others from their answers', async () => {
    const { node } = recorder(false, answers({}));
    const got: string[] = [];
    const thrown: unknown[] = [];
    const onError = (err: unknown) => thrown.push(err);
    process.on('uncaughtException', onError);
    try {
      sendGrant(asNode(node), plan(false, 'a'), () => {
        throw new Error('listener bug');
      });
      sendGrant(asNode(node), plan(false, 'b'), (err, v) => got.push(JSON.stringify(err ?? v)));
      node.flush();
      expect(got).toEqual(['[1,0]']);
      await vi.waitFor(() => expect(String(thrown[0])).toContain('listener bug'));
    } finally {
      process.off('uncaughtException', onError);
    }
  });
});
