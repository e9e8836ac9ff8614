import 'server-only';
import type { NodeView, NodesResponse } from '../api/nodes';
import type { NodeStatus } from '../cluster/supervisor';
import { getRuntime, whenReady } from './runtime';

/** Every master's state as its clients see it, merged with the supervisor's view in the sandbox. */
export async function listNodes(): Promise<NodesResponse> {
  const runtime = getRuntime();
  const readAt = Date.now();
  const quorum = Math.floor(runtime.endpoints.length / 2) + 1;
  if (runtime.mode === 'unconfigured') return { mode: 'unconfigured', readAt, quorum: 0, nodes: [] };

  const [statuses, probes] = await Promise.all([
    runtime.control?.nodes().catch(() => null) ?? Promise.resolve(null),
    Promise.all(runtime.clients.map((client) => probe(client))),
  ]);
  const nodes: NodeView[] = runtime.endpoints.map((endpoint, i) => {
    const status: NodeStatus | undefined = statuses?.[i];
    const p = probes[i]!;
    return {
      id: i + 1,
      label: endpoint.label,
      port: endpoint.port,
      up: p.up,
      process: status?.state ?? null,
      rttMs: p.rttMs,
      persistence: status?.persistence ?? p.persistence,
      uptimeMs: status?.uptimeMs ?? p.uptimeMs,
      fault: status?.fault?.kind ?? null,
      restartAt: status?.restartAt ?? null,
      error: p.error,
    };
  });
  return { mode: runtime.mode, readAt, quorum, nodes };
}

interface Probe { up: boolean; rttMs: number | null; persistence: string | null; uptimeMs: number | null; error: string | null }

async function probe(client: import('ioredis').Redis): Promise<Probe> {
  try {
    await whenReady(client, 1_000);
    const started = performance.now();
    const info = await client.info('server', 'persistence');
    const rttMs = Math.round((performance.now() - started) * 100) / 100;
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim() ?? null;
    const aof = field('aof_enabled') === '1';
    const uptime = field('uptime_in_seconds');
    return { up: true, rttMs, persistence: aof ? 'aof' : 'none', uptimeMs: uptime === null ? null : Number(uptime) * 1000, error: null };
  } catch (err) {
    return { up: false, rttMs: null, persistence: null, uptimeMs: null, error: (err as Error).message };
  }
}
