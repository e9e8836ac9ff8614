import { describe, expect, it } from 'vitest';
import { grantPlan, nodeProbes, sendGrant, type GrantReply } from '@/lib/redlock/grant';
import type { LockNode, Reply } from '@/lib/redlock/node';
import { lockValue } from '@/lib/redlock/value';

const probes = nodeProbes('t:epoch', 't:fence', 60_000);
const plan = (fenced: boolean) => grantPlan(['t:lock:r'], lockValue('tok', '{"owner":"o"}'), 1_000, { quarantine: true, fenced, probes });

/** A node whose batch is captured and answered with `replies` (what Redis would say, in order). */
function fakeNode(wantTime: boolean, replies: (commands: Buffer[]) => unknown[]) {
  const sent: Buffer[][] = [];
  const node = {
    quarantine: { wantTime, over: null as string | null, starting: null },
    callBatch(commands: Buffer[], reply: Reply) {
      sent.push(commands);
      reply(null, replies(commands));
    },
  };
  return { node: node as unknown as LockNode & typeof node, sent };
}

function grant(node: LockNode, fenced = false): GrantReply {
  let out: GrantReply | null = null;
  sendGrant(node, plan(fenced), (err, value) => {
    if (err) throw err;
    out = value as GrantReply;
  });
  return out!;
}

describe('the grant batch (lib/redlock/grant.ts)', () => {
  it('reads TIME before the SET and the epoch and fence register after it', () => {
    const { node, sent } = fakeNode(true, () => [['1000', '0'], null, ['1', '1'], '7']);
    grant(node, true);
    const text = sent[0]!.map((b) => b.toString());
    expect(text).toHaveLength(4);
    expect(text[0]).toContain('TIME');
    // One SET writes the token and the metadata, in one value: `<token> <json>`.
    expect(text[1]).toMatch(/SET[\s\S]*t:lock:r[\s\S]*tok \{"owner":"o"\}[\s\S]*NX[\s\S]*GET[\s\S]*PX/);
    expect(text[2]).toContain('HMGET');
    expect(text[3]).toContain('t:fence');
  });

  it('a quarantine is over only if the node clock passed it before the SET; then TIME is no longer asked for', () => {
    // quarantineUntil 2,000,000 ms; TIME (seconds, micros) read before the SET says 1,999.999 s.
    const before = fakeNode(true, () => [['1999', '999000'], null, ['1000', '2000000']]);
    expect(grant(before.node)).toEqual([2, 2_000_000]);
    expect(before.node.quarantine.wantTime).toBe(true);
    const after = fakeNode(true, () => [['2000', '0'], null, ['1000', '2000000']]);
    expect(grant(after.node)).toEqual([1, 0]);
    expect(after.node.quarantine).toMatchObject({ wantTime: false, over: '1000|2000000' });
    // The same quarantine, remembered as over: no TIME in the next batch, and the node votes for.
    const sent = after.sent;
    expect(grant(Object.assign(after.node, { callBatch(commands: Buffer[], reply: Reply) {
      sent.push(commands);
      reply(null, [null, ['1000', '2000000']]);
    } }))).toEqual([1, 0]);
    expect(sent[1]!.some((b) => b.toString().includes('TIME'))).toBe(false);
  });

  it('without a TIME reply a possibly quarantined node votes quarantined and asks for the time next', () => {
    const { node } = fakeNode(false, () => [null, ['1000', '2000000']]);
    expect(grant(node)).toEqual([2, 2_000_000]);
    expect(node.quarantine.wantTime).toBe(true);
  });

  it('no sentinel: the node lost its data; a held key answers its holder; fenced grants carry the register', () => {
    expect(grant(fakeNode(false, () => [null, [null, null]]).node)).toEqual([3]);
    // The holder's value carries its metadata after the token; the vote names the token alone.
    expect(grant(fakeNode(false, () => ['other-token {"owner":"x y"}', ['1000', '1000']]).node)).toEqual([0, 1, 'other-token', '{"owner":"x y"}']);
    expect(grant(fakeNode(false, () => ['bare-token', ['1000', '1000']]).node)).toEqual([0, 1, 'bare-token', null]);
    expect(grant(fakeNode(false, () => [null, ['1000', '1000'], '41']).node, true)).toEqual([1, 41]);
  });
});
