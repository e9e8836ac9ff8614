/**
 * The targeted trial `lose-majority`: what the fence register's reseed exists for. A majority of
 * the nodes lose their data (crash, restart without persistence) after A was granted a fenced lock:
 * their fence registers are gone with it, and the registers that remember A's fence are on a
 * minority. B, which reaches only the nodes that lost their data (its links to the others are
 * blackholed), would compute its fence from their registers alone. The safe core refuses B while
 * it is cut off (a lost register is reseeded only from N − quorum + 1 other nodes, read after the
 * quarantine: packages/redlock/src/reseed.ts), then grants it a fence above A's once B reaches the
 * others. A core that does not reseed gives B a fence below A's, which the fencing checker finds.
 *
 * The trial's ceiling is shorter than the other trials' (the quarantines last that long, and B
 * waits them out): nothing else here needs A to hold across a restart.
 */
import { quorumSize, readEpoch } from '@redlock-console/redlock';
import { Rng } from './random';
import { clientSettings, markPrefixClean, type RunContext } from './run-context';
import type { TrialResult, TrialSpec } from './targeted-kinds';
import { acquire, acquireUntilGranted, Sessions } from './trial-sessions';

/** The trial's lease ceiling (and A's lease), ms. */
const CEILING_MS = 1_500;

const ids = (nodes: readonly number[]) => nodes.map((n) => n + 1).join(',');

export async function runMajorityLossTrial(run: RunContext, spec: TrialSpec): Promise<TrialResult> {
  const { supervisor, direct } = run;
  const n = supervisor.size;
  const rng = new Rng(spec.seed);
  const order = rng.sample(
    Array.from({ length: n }, (_, i) => i),
    n,
  );
  const lost = order.slice(0, quorumSize(n)).sort((a, b) => a - b);
  const kept = order.filter((i) => !lost.includes(i));
  const victim = spec.victim !== undefined && lost.includes(spec.victim) ? spec.victim : lost[0]!;
  const prefix = `chaos:${run.runId}:${spec.id}:`;
  const settings = clientSettings(run, prefix, { maxTtlMs: CEILING_MS, retryDelayMs: 20, retryJitterMs: 10, ...spec.settings });
  const resource = `f:${spec.id}`;
  const sessions = new Sessions(run, spec);
  const label = `lose-majority: nodes ${ids(lost)} lose their data after A's grant`;
  const result: TrialResult = {
    kind: spec.kind,
    id: spec.id,
    prefix,
    logs: sessions.logs,
    victim,
    majority: lost,
    armed: false,
    defence: null,
    defended: false,
    label,
    detail: '',
  };
  const notes: string[] = [];
  try {
    await markPrefixClean(run, prefix, CEILING_MS);
    const a = await sessions.start(0, supervisor.directUrls(), settings);
    const b = await sessions.start(1, run.links.urls(1), settings);
    // B has talked to every node before (a long-lived client).
    const warm = await acquire(b, `${resource}.warm`, CEILING_MS, 5);
    if (warm.granted) await b.rpc({ op: 'release', resource: `${resource}.warm` });
    // A, fenced, on every node; released (its lease is over before B's grant in any case).
    const lockA = await acquire(a, resource, CEILING_MS, 5);
    if (lockA.granted) await a.rpc({ op: 'release', resource });
    notes.push(lockA.granted ? `A granted, fence ${lockA.fence}` : `A refused (${lockA.error})`);
    spec.record({ kind: 'fault', what: label });
    for (const i of lost) {
      await supervisor.crash(i + 1);
      spec.record({ kind: 'data-loss', node: i });
      await supervisor.start(i + 1, 'none');
    }
    const emptied = await Promise.all(lost.map(async (i) => (await readEpoch(direct[i]!, prefix)) === null));
    result.armed = lockA.granted && emptied.every(Boolean);
    // B reaches only the nodes that lost their data. Their registers can be reseeded only from
    // N − quorum + 1 other nodes (packages/redlock/src/reseed.ts), and the ones B reaches are not
    // enough: the safe core refuses B past the quarantines rather than trust the floor of a clock.
    for (const k of kept) run.links.set(1, k, { kind: 'blackhole' });
    const cutOff = await acquireUntilGranted(b, resource, CEILING_MS, 3 * CEILING_MS + 1_000);
    const cutOffAbove = cutOff.granted && lockA.granted && (cutOff.fence ?? 0) > (lockA.fence ?? 0);
    if (cutOff.granted) await b.rpc({ op: 'release', resource });
    notes.push(
      cutOff.granted
        ? `B granted while cut off, on nodes ${ids(lost)}, fence ${cutOff.fence}${cutOffAbove ? '' : " (NOT above A's)"}`
        : 'B refused while it reaches only the nodes that lost their data',
    );
    // Then B reaches every node: the reseed reads the others, and B is granted above A.
    for (const k of kept) run.links.set(1, k, { kind: 'pass' });
    const lockB = cutOff.granted ? cutOff : await acquireUntilGranted(b, resource, CEILING_MS, 2 * CEILING_MS + 2_000);
    const causes = await Promise.all(lost.map(async (i) => (await readEpoch(direct[i]!, prefix))?.cause ?? 'none'));
    notes.push(
      lockB.granted ? `B granted, fence ${lockB.fence}` : `B never granted (${lockB.error})`,
      `lost nodes' causes: ${causes.join(',')}`,
    );
    const above = lockB.granted && lockA.granted && (lockB.fence ?? 0) > (lockA.fence ?? 0);
    result.defence = lockB.granted
      ? `${cutOff.granted ? 'B granted while cut off' : 'B refused while cut off'}; then B's fence ${above ? 'above' : 'NOT above'} A's; quarantined (${causes.join(',')})`
      : null;
    result.defended = !cutOff.granted && above && causes.every((c) => c === 'data-loss');
    if (lockB.granted && !cutOff.granted) await b.rpc({ op: 'release', resource });
    spec.record({ kind: 'heal', what: label });
  } finally {
    for (let c = 0; c < n; c++) run.links.set(1, c, { kind: 'pass' });
    await sessions.close();
  }
  result.detail = notes.join('; ');
  return result;
}
