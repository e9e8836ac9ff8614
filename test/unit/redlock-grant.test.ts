import { describe, expect, it } from 'vitest';
import { sendGrant } from '@/lib/redlock/grant';
import { grantPlan, nodeProbes } from '@/lib/redlock/grant-plan';
import type { GrantReply } from '@/lib/redlock/grant-verdict';
import type { BatchGroup, LockNode, Reply } from '@/lib/redlock/node';
import { lockValue } from '@/lib/redlock/value';

// The command layout and the verdicts of grant.ts / grant-group.ts, with the node's connection
// replaced by a recorder that answers each command by its kind. (What Redis does with these
// commands is tested on real nodes: redlock-core, redlock-quarantine and redlock-fencing.)

const probes = nodeProbes('t:epoch', 't:fence', 60_000);
const plan = (fenced: boolean, token = 'tok') =>
  grantPlan([`t:lock:${token}`], lockValue(token, '{"owner":"o"}'), 1_000, { quarantine: true, fenced, probes });

type Kind = 'TIME' | 'SET' | 'HMGET' | 'FENCE';
type Answer = (kind: Kind, text: string) => unknown;

function kindOf(text: string): Kind {
  if (text.includes('\r\nTIME\r\n')) return 'TIME';
  if (text.includes('\r\nSET\r\n')) return 'SET';
  if (text.includes('\r\nHMGET\r\n')) return 'HMGET';
  return 'FENCE';
}

/**
 * A node whose commands are recorded batch by batch: flush() seals the batch's groups, as
 * LockNode's flush does, and answers every command in order (an Error answer fails the command).
 */
function recorder(wantTime: boolean, answer: Answer) {
  const batches: string[][] = [];
  let queue: Array<[string, Reply]> = [];
  let groups = new Map<object, BatchGroup>();
  const node = {
    quarantine: { wantTime, over: null as string | null, starting: null },
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
      reply(null, texts.map((t) => answer(kindOf(t), t)));
    },
    flush() {
      for (const group of groups.values()) group.seal();
      groups = new Map();
      const batch = queue;
      queue = [];
      batches.push(batch.map(([text]) => text));
      for (const [text, reply] of batch) {
        const value = answer(kindOf(text), text);
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
  plans.forEach((p, i) => sendGrant(asNode(node), p, (err, value) => {
    out[i] = err ?? (value as GrantReply);
  }));
  node.flush();
  return out;
}

const answers = (over: Partial<Record<Kind, unknown>>): Answer => (kind) => over[kind] ?? ({ TIME: ['1000', '0'], SET: null, HMGET: ['1', '1'], FENCE: '7' } as const)[kind];

describe('the grant batch (lib/redlock/grant.ts, grant-group.ts)', () => {
  it('reads TIME before the SET and the epoch and fence register after it', () => {
    const { node, batches, kinds } = recorder(true, answers({}));
    expect(grants(node, [plan(true)])).toEqual([[1, 7]]);
    expect(kinds()).toEqual([['TIME', 'SET', 'HMGET', 'FENCE']]);
    // One SET writes the token and the metadata, in one value: `<token> <json>`.
    expect(batches[0]![1]).toMatch(/SET[\s\S]*t:lock:tok[\s\S]*tok \{"owner":"o"\}[\s\S]*NX[\s\S]*GET[\s\S]*PX/);
    expect(batches[0]![3]).toContain('t:fence');
  });

  it('the grants of one batch share one TIME before them and one epoch and fence read after them all', () => {
    const { node, kinds } = recorder(true, answers({}));
    const replies = grants(node, [plan(true, 'a'), plan(false, 'b'), plan(true, 'c')]);
    expect(kinds()).toEqual([['TIME', 'SET', 'SET', 'SET', 'HMGET', 'FENCE']]);
    // Every fenced member gets the register read after its SET; the unfenced one none.
    expect(replies).toEqual([[1, 7], [1, 0], [1, 7]]);
    // Unfenced grants alone read no register.
    const unfenced = recorder(false, answers({}));
    grants(unfenced.node, [plan(false, 'a'), plan(false, 'b')]);
    expect(unfenced.kinds()).toEqual([['SET', 'SET', 'HMGET']]);
  });

  it('a quarantine is over only for the grants whose SET ran after the TIME that says so', () => {
    // quarantineUntil 2,000,000 ms; TIME says 2,000.000 s: over. The node thought it was not
    // quarantined when the first grant was sent (no TIME), then learned it might be.
    const { node, kinds } = recorder(false, answers({ TIME: ['2000', '0'], HMGET: ['1000', '2000000'] }));
    const out: Array<GrantReply | Error> = [];
    sendGrant(asNode(node), plan(false, 'early'), (err, v) => out.push(err ?? (v as GrantReply)));
    node.quarantine.wantTime = true;
    sendGrant(asNode(node), plan(false, 'late'), (err, v) => out.push(err ?? (v as GrantReply)));
    sendGrant(asNode(node), plan(false, 'later'), (err, v) => out.push(err ?? (v as GrantReply)));
    node.flush();
    expect(kinds()).toEqual([['SET', 'TIME', 'SET', 'SET', 'HMGET']]);
    // The first SET may have run inside the quarantine: it votes quarantined, even though the
    // node then remembers the quarantine as over (the later members were judged after it).
    expect(out).toEqual([[2, 2_000_000], [1, 0], [1, 0]]);
    expect(node.quarantine).toMatchObject({ wantTime: false, over: '1000|2000000' });
    // The same quarantine, remembered as over: no TIME in the next batch, and the node votes for.
    expect(grants(node, [plan(false)])).toEqual([[1, 0]]);
    expect(kinds()[1]).toEqual(['SET', 'HMGET']);
  });

  it('a TIME before the end of the quarantine leaves it in force and asks for the time again', () => {
    const before = recorder(true, answers({ TIME: ['1999', '999000'], HMGET: ['1000', '2000000'] }));
    expect(grants(before.node, [plan(false)])).toEqual([[2, 2_000_000]]);
    expect(before.node.quarantine.wantTime).toBe(true);
    // Without a TIME reply a possibly quarantined node votes quarantined and asks for the time next.
    const untimed = recorder(false, answers({ HMGET: ['1000', '2000000'] }));
    expect(grants(untimed.node, [plan(false)])).toEqual([[2, 2_000_000]]);
    expect(untimed.node.quarantine.wantTime).toBe(true);
  });

  it('no sentinel: the node lost its data; a held key answers its holder; fenced grants carry the register', () => {
    expect(grants(recorder(false, answers({ HMGET: [null, null] })).node, [plan(false)])).toEqual([[3]]);
    // The holder's value carries its metadata after the token; the vote names the token alone.
    expect(grants(recorder(false, answers({ SET: 'other-token {"owner":"x y"}' })).node, [plan(false)])).toEqual([[0, 1, 'other-token', '{"owner":"x y"}']]);
    expect(grants(recorder(false, answers({ SET: 'bare-token' })).node, [plan(false)])).toEqual([[0, 1, 'bare-token', null]]);
    expect(grants(recorder(false, answers({ FENCE: '41' })).node, [plan(true)])).toEqual([[1, 41]]);
  });

  it('a failed read fails every grant that needs it; a failed grant fails only itself', () => {
    const epochDown = recorder(false, answers({ HMGET: new Error('LOADING') }));
    expect(grants(epochDown.node, [plan(false, 'a'), plan(false, 'b')]).map(String)).toEqual(['Error: LOADING', 'Error: LOADING']);
    const fenceDown = recorder(false, answers({ FENCE: new Error('WRONGTYPE') }));
    expect(grants(fenceDown.node, [plan(false, 'a'), plan(true, 'b')]).map((r) => (r instanceof Error ? r.message : r))).toEqual([[1, 0], 'WRONGTYPE']);
    const oneDown = recorder(false, (kind, text) => (kind === 'SET' && text.includes('t:lock:b') ? new Error('OOM') : answers({})(kind, text)));
    expect(grants(oneDown.node, [plan(false, 'a'), plan(false, 'b'), plan(false, 'c')]).map((r) => (r instanceof Error ? r.message : r))).toEqual([[1, 0], 'OOM', [1, 0]]);
  });

  it('a node still connecting gets each grant as a batch of its own: [TIME], SET, epoch, [fence]', () => {
    const { node, kinds } = recorder(true, answers({}));
    node.connecting = true;
    let reply: unknown;
    sendGrant(asNode(node), plan(true), (err, value) => (reply = err ?? value));
    expect(reply).toEqual([1, 7]);
    expect(kinds()).toEqual([['TIME', 'SET', 'HMGET', 'FENCE']]);
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
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(String(thrown[0])).toContain('listener bug');
    } finally {
      process.off('uncaughtException', onError);
    }
  });
});
