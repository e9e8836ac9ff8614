import 'server-only';
import { ControlClient } from '../cluster/control-client';
import { SANDBOX_NODES } from '../cluster/sandbox';
import type { NodeStatus } from '../cluster/supervisor';
import type { MainMasters } from '../scenarios/separation';
import { runIdOf } from '../scenarios/separation';
import { getRuntime, type Runtime } from './runtime';

/**
 * The teaching sandbox as the console sees it: the control channel of the masters started for the
 * scenarios (lib/cluster/sandbox.ts), never the main one (runtime.control), which holds
 * applications' locks. Read from the environment once, like the runtime.
 */
let sandbox: { control: ControlClient | null } | undefined;

export function sandboxControl(): ControlClient | null {
  sandbox ??= { control: ControlClient.sandboxFromEnv(process.env) };
  return sandbox.control;
}

/** Why scenarios are off here, in words for the console; null when the sandbox is there. */
export function sandboxProblem(runtime: Runtime = getRuntime()): string | null {
  if (runtime.mode === 'unconfigured') return runtime.problem ?? 'no masters are configured';
  if (sandboxControl()) return null;
  return runtime.mode === 'external'
    ? "Scenarios are off: the masters are external (REDLOCK_NODES) and no teaching sandbox is configured. Scenarios crash, pause and slow the nodes they run on, so they only run on masters started for them, never on the masters that hold your applications' locks: set REDLOCK_SANDBOX=local to have `npm start` start five of its own (redis-server needed; not in the image)."
    : "Scenarios are off: REDLOCK_SANDBOX=off, so no teaching sandbox was started. Scenarios crash, pause and slow the nodes they run on, so they never run on the masters that hold your applications' locks: restart with REDLOCK_SANDBOX unset (or local) to start five masters for them.";
}

/** The main masters, as a run must never reach them: the console's URLs, their redis-servers' direct URLs, their run_ids. */
export async function mainMasters(runtime: Runtime = getRuntime()): Promise<MainMasters> {
  const direct = runtime.control ? await runtime.control.nodes().catch(() => [] as NodeStatus[]) : [];
  return {
    urls: [...runtime.endpoints.map((e) => e.url), ...direct.flatMap((n) => [n.url, n.directUrl])],
    runIds: async () => (await Promise.all(runtime.clients.map(runIdOf))).filter((id): id is string => id !== null),
  };
}

/** Where clients reach a node (through its fault proxy), without credentials. */
const address = (n: NodeStatus) => {
  const u = new URL(n.url);
  return `${u.hostname}:${u.port}`;
};

/** Where runs run, in one sentence (the first step says it, the catalog shows it). */
export function whereSentence(sandbox: readonly NodeStatus[], runtime: Runtime = getRuntime()): string {
  const main = runtime.endpoints.map((e) => e.label);
  return `This run runs on the teaching sandbox: ${sandbox.length === SANDBOX_NODES ? 'five' : sandbox.length} masters started for the scenarios alone (${sandbox
    .map(address)
    .join(
      ', ',
    )}), with their own ports, fault proxies, data and password. Every crash, pause and delay below hits them; the masters that hold applications' locks (${main.join(', ')}) are never touched.`;
}
