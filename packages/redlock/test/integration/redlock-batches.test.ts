import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markNodeClean } from '../../src/epoch';
import { sendGrant } from '../../src/grant';
import { grantPlan, nodeProbes } from '../../src/grant-plan';
import { LockNode, type Reply } from '../../src/node';
import { ScriptCall } from '../../src/resp';
import { RELEASE_SCRIPT } from '../../src/scripts';
import { ReleaseCall } from '../../src/release-group';
import { lockValue } from '../../src/value';
import { startTestCluster, type TestCluster } from '@/test/support/cluster';
import { MonitorFeed } from '@/test/support/monitor';

// What one node's connection carries when several operations share a batch (node.ts, grant-group.ts),
// read back from a real redis-server with MONITOR: the order Redis ran the commands in.

let cluster: TestCluster;
let url: string;

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 1, persistence: 'none' });
  url = cluster.supervisor.directUrls()[0]!;
});

afterAll(async () => {
  await cluster?.stop();
});

const probes = nodeProbes('b:epoch', 'b:fence', 60_000, '2', 1_000, 1);
const grant = (key: string, token: string, fenced = false) =>
  grantPlan([key], lockValue(token, '{"owner":"t"}'), 5_000, { quarantine: true, fenced, probes });
const release = (key: string, token: string) => new ScriptCall(RELEASE_SCRIPT, 1, [key, token, '', key]);

/**
 * Runs `send` in one tick on a fresh LockNode (whose quarantine state `prepare` may set); the
 * commands Redis ran, in order (`NAME key`), and every reply.
 */
async function ranInOrder(
  send: (node: LockNode, done: () => Reply) => void,
  prepare?: (node: LockNode) => void,
): Promise<{ ran: string[]; replies: unknown[] }> {
  const node = new LockNode(0, url, 1_000, () => undefined);
  await node.whenBooted();
  prepare?.(node);
  const monitor = await MonitorFeed.open(url);
  const replies: unknown[] = [];
  let expected = 0;
  let answered = 0;
  let settle!: () => void;
  const all = new Promise<void>((resolve) => (settle = resolve));
  send(node, () => {
    const at = expected++;
    return (err, value) => {
      replies[at] = err ?? value;
      if (++answered === expected) settle();
    };
  });
  await all;
  // MONITOR reports on its own connection: drain it, then read what the node ran.
  const echo = new Redis(url);
  let echoSource = '';
  try {
    echoSource = await monitor.drain((marker) => echo.echo(marker));
  } finally {
    echo.disconnect();
    monitor.close();
  }
  await node.close();
  const ran: string[] = [];
  for (const { source, args } of monitor.commands) {
    if (source.startsWith('lua') || source === echoSource) continue;
    const [name, ...rest] = args;
    const upper = name!.toUpperCase();
    if (upper === 'SET' || upper === 'HMGET' || upper === 'GET') ran.push(`${upper} ${rest[0]}`);
    else if (upper === 'EVALSHA' || upper === 'EVAL') ran.push(`${upper} ${rest[2]}`);
    else if (!['SCRIPT', 'INFO', 'QUIT'].includes(upper)) ran.push(upper);
  }
  return { ran, replies };
}

describe('one node, one batch: the order Redis runs our commands in', () => {
  beforeAll(async () => {
    const admin = new Redis(url);
    // A clean sentinel for this process: no quarantine, register 41.
    await markNodeClean(admin, { keyPrefix: 'b:', maxTtlMs: 60_000 });
    await admin.hset('b:epoch', 'fence', '41');
    await admin.set('b:lock:held', 'other {"owner":"x"}', 'PX', 5_000);
    admin.disconnect();
  });

  it('grants keep their order and share one TIME before them and one probe (sentinel and register) after them all', async () => {
    const { ran, replies } = await ranInOrder((node, done) => {
      sendGrant(node, grant('b:lock:one', 'tok1'), done());
      node.call(release('b:lock:one', 'tok1'), done());
      sendGrant(node, grant('b:lock:held', 'tok2', true), done());
      sendGrant(node, grant('b:lock:three', 'tok3', true), done());
    });
    // A fresh node may be quarantined until it has read a TIME: one, before the first grant. After
    // the grants, one probe; a client's first probe of a node is a check, and the node's first
    // check of this probe script answers NOSCRIPT (nothing loads it but a check): its EVAL follows
    // at once, still after every SET. Each check is followed by UNWATCH and a WATCH of the anchor
    // (node.ts armAfterCheck: the rollback detector), trusted only after the check that answered.
    expect(ran).toEqual([
      'TIME',
      'SET b:lock:one',
      'EVALSHA b:lock:one',
      'SET b:lock:held',
      'SET b:lock:three',
      'EVALSHA b:epoch',
      'UNWATCH',
      'WATCH',
      'EVAL b:epoch',
      'UNWATCH',
      'WATCH',
    ]);
    // Granted (unfenced), released, held by `other`, granted with the register read after its SET.
    expect(replies).toEqual([[1, 0], 1, [0, 1, 'other', '{"owner":"x"}'], [1, 41]]);
  });

  it('a grant sent before the node wanted TIME is judged without it', async () => {
    const admin = new Redis(url);
    // A quarantine that ended long ago by the node's clock (ms), not yet known to the client.
    await admin.hset('b:epoch', 'createdAt', '1000', 'quarantineUntil', '2000');
    admin.disconnect();
    const { ran, replies } = await ranInOrder(
      (node, done) => {
        sendGrant(node, grant('b:lock:early', 'e'), done());
        node.quarantine.wantTime = true;
        sendGrant(node, grant('b:lock:late', 'l'), done());
      },
      (node) => {
        node.quarantine.wantTime = false;
      },
    );
    expect(ran).toEqual(['SET b:lock:early', 'TIME', 'SET b:lock:late', 'EVALSHA b:epoch', 'UNWATCH', 'WATCH']);
    // The early SET may have run inside the quarantine as far as the client can tell: against.
    expect(replies).toEqual([
      [2, 2000, null, false],
      [1, 0],
    ]);
  });

  it('releases are merged only while queued back to back: a cleanup queued after its own SET runs after it, never in an earlier merged call', async () => {
    const admin = new Redis(url);
    await admin.set('b:lock:x', 'tx', 'PX', 5_000);
    await admin.set('b:lock:y', 'ty', 'PX', 5_000);
    admin.disconnect();
    const { ran, replies } = await ranInOrder((node, done) => {
      // Another lock's releases (a run of two: one merged call), then a grant of R, then R's own
      // cleanup in the same batch (a failed attempt decided before the batch was written).
      node.callRelease(new ReleaseCall(['b:lock:x'], 'tx', '', ['x']), done());
      node.callRelease(new ReleaseCall(['b:lock:y'], 'ty', '', ['y']), done());
      sendGrant(node, grant('b:lock:r', 'tr'), done());
      node.callRelease(new ReleaseCall(['b:lock:r'], 'tr', '', ['r']), done());
    });
    expect(ran).toEqual(['EVALSHA b:lock:x', 'TIME', 'SET b:lock:r', 'EVALSHA b:lock:r', 'EVALSHA b:epoch', 'UNWATCH', 'WATCH']);
    // x and y deleted by the merged call, r granted, then deleted by its cleanup: nothing left.
    expect(replies[0]).toBe(1);
    expect(replies[1]).toBe(1);
    expect(replies[3]).toBe(1);
    const check = new Redis(url);
    expect(await check.exists('b:lock:x', 'b:lock:y', 'b:lock:r')).toBe(0);
    check.disconnect();
  });
});
