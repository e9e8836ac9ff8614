/**
 * The targeted trial `fence-stall`: what the fence round's quorum exists for. A's grant is voted
 * for by exactly a majority (its links to the other two nodes are blackholed) and one of those
 * voters, the victim, stalls as A's fence round reaches it: a stall proxy holds the fence script
 * back there, with everything after it on that connection, and later resets the connection, so the
 * confirmation never runs on the victim. Only two nodes can confirm A's fence, a minority.
 *
 * The roles follow the fence registers (read after the fresh prefix is marked clean, which seeds
 * them from each node's clock): the two nodes with the lowest registers are the ones A never
 * reaches. So A's fence F = max(registers of A's voters) + 1 is above every register, and a grant
 * later on the victim and those two nodes, whose registers never saw F, computes a fence ≤ F.
 *
 * The safe core refuses A (QuorumUnavailableError: it asks the nodes pending at the grant too, but
 * A cannot reach them). A core that accepts fewer confirmations grants A; B, reaching only the
 * victim and the two nodes A never reached, is granted once A's key on the victim has expired, with
 * a fence ≤ A's, which the fencing checker finds (a duplicate or a fence going back).
 */
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { quorumSize, readEpoch } from '@redlock-console/redlock';
import { Rng } from './random';
import { clientSettings, markPrefixClean, type RunContext } from './run-context';
import { StallProxy } from './stall-proxy';
import type { TrialResult, TrialSpec } from './targeted-kinds';
import { acquire, acquireUntilGranted, Sessions, type Granted } from './trial-sessions';

/** The trial's lease ceiling (and A's and B's lease), ms: B waits out A's key on the victim. */
const CEILING_MS = 1_500;

const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');

/** The SHA1s of the fence scripts of the core build the trial runs (one confirmation, and a batch's merged ones where the build has them). */
async function fenceShas(indexPath: string): Promise<string[]> {
  const lua = (await import(pathToFileURL(join(dirname(indexPath), 'scripts', 'index.ts')).href)) as {
    FENCE_SCRIPT: { sha: string };
    FENCE_MANY_SCRIPT?: { sha: string };
  };
  return [lua.FENCE_SCRIPT.sha, ...(lua.FENCE_MANY_SCRIPT ? [lua.FENCE_MANY_SCRIPT.sha] : [])];
}

export async function runFenceStallTrial(run: RunContext, spec: TrialSpec): Promise<TrialResult> {
  const { supervisor, direct } = run;
  const n = supervisor.size;
  const rng = new Rng(spec.seed);
  const prefix = `chaos:${run.runId}:${spec.id}:`;
  const settings = clientSettings(run, prefix, { maxTtlMs: CEILING_MS, retryDelayMs: 20, retryJitterMs: 10, ...spec.settings });
  const resource = `f:${spec.id}`;
  const registers = async (nodes: readonly number[]) =>
    Promise.all(nodes.map(async (i) => (await readEpoch(direct[i]!, prefix))?.fence ?? 0));

  await markPrefixClean(run, prefix, CEILING_MS);
  const all = Array.from({ length: n }, (_, i) => i);
  const seeded = await registers(all);
  // Lowest registers first: A never reaches the first two.
  const byRegister = all.slice().sort((x, y) => seeded[x]! - seeded[y]! || x - y);
  const unreached = byRegister.slice(0, n - quorumSize(n)).sort((x, y) => x - y);
  const majority = byRegister.slice(unreached.length).sort((x, y) => x - y);
  const victim = spec.victim !== undefined && majority.includes(spec.victim) ? spec.victim : rng.pick(majority);
  const confirmers = majority.filter((i) => i !== victim);
  const bSees = [victim, ...unreached].sort((x, y) => x - y);
  const label = `fence-stall: A voted for by nodes ${ids(majority)}, node ${victim + 1} stalls at the fence round`;
  const sessions = new Sessions(run, spec);
  const result: TrialResult = {
    kind: spec.kind,
    id: spec.id,
    prefix,
    logs: sessions.logs,
    victim,
    majority,
    armed: false,
    defence: null,
    defended: false,
    label,
    detail: '',
  };
  const notes: string[] = [];
  const stall = new StallProxy(supervisor.nodes()[victim]!.port);
  await stall.start();
  try {
    const urlsA = run.links.urls(0);
    urlsA[victim] = `redis://127.0.0.1:${stall.port}`;
    const a = await sessions.start(0, urlsA, settings);
    const b = await sessions.start(1, run.links.urls(1), settings);
    for (const u of unreached) run.links.set(0, u, { kind: 'blackhole' });
    stall.arm(await fenceShas(spec.core.indexPath));
    spec.record({ kind: 'fault', what: label });
    // Retries: an attempt that fails before its fence round (a timeout on a loaded box) would leave
    // the trial without its danger; once the victim is stalled, every attempt meets it.
    let lockA: Granted = { granted: false };
    for (let tries = 0; tries < 3 && !lockA.granted && stall.stalled === 0; tries++) lockA = await acquire(a, resource, CEILING_MS, 3);
    // What B will compute from (the victim and the unreached) against what A's fence round raised.
    const seen = await registers(bSees);
    const raised = await registers(confirmers);
    result.armed = stall.stalled > 0 && Math.max(...seen) < Math.max(...raised);
    notes.push(
      lockA.granted ? `A granted, fence ${lockA.fence}` : `A refused (${lockA.error})`,
      `fence script held on node ${victim + 1}: ${stall.stalled > 0 ? 'yes' : 'no'}`,
      `registers B will see (nodes ${ids(bSees)}) max ${Math.max(...seen)}, raised on nodes ${ids(confirmers)} max ${Math.max(...raised)}`,
    );
    if (lockA.granted) await a.rpc({ op: 'release', resource });
    // The stall ends in a reset: the held fence script (and A's cleanup or release) never run there.
    stall.release();
    for (const u of unreached) run.links.set(0, u, { kind: 'pass' });
    spec.record({ kind: 'heal', what: label });

    // B reaches only the victim and the nodes A never reached; A's key on the victim expires by itself.
    for (const c of confirmers) run.links.set(1, c, { kind: 'blackhole' });
    const lockB = await acquireUntilGranted(b, resource, CEILING_MS, 3 * CEILING_MS + 2_000);
    notes.push(lockB.granted ? `B granted on nodes ${ids(bSees)}, fence ${lockB.fence}` : `B never granted (${lockB.error})`);
    if (lockB.granted) await b.rpc({ op: 'release', resource });
    // The safe core's defence: A refused, as its fence could not be confirmed on a quorum (a refusal
    // before any fence round, the danger not in place, proves nothing).
    result.defence = lockA.granted ? `A granted with fence ${lockA.fence} confirmed on a minority` : `A refused (${lockA.error})`;
    result.defended = result.armed && !lockA.granted && lockA.error === 'QuorumUnavailableError';
  } finally {
    for (let c = 0; c < n; c++) {
      run.links.set(0, c, { kind: 'pass' });
      run.links.set(1, c, { kind: 'pass' });
    }
    await stall.close();
    await sessions.close();
  }
  result.detail = notes.join('; ');
  return result;
}
