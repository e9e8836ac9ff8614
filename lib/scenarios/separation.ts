import type { Redis } from 'ioredis';

/**
 * The masters that hold applications' locks, as a run must never reach them: scenarios crash, pause,
 * slow and roll back the nodes they are given, so a run refuses to start when one of its nodes is
 * also one of these (ScenarioCluster.open checks before the run's first command).
 */
export interface MainMasters {
  /** Every URL a main master is reached at: the console's client URLs and, when known, the redis-servers' direct ones. */
  urls: readonly string[];
  /** The run_id (INFO server) of every main master that answers now: the same process behind another address. */
  runIds(): Promise<readonly string[]>;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[?::1\]?|\[?::ffff:127(\.\d{1,3}){3}\]?|0\.0\.0\.0|\[?::\]?)$/i;

/** `host:port` of a redis URL, every loopback spelling one host (127.0.0.1, localhost, ::1 are one machine's). */
export function endpointOf(url: string): string {
  try {
    const u = new URL(url);
    const host = LOOPBACK.test(u.hostname) ? 'loopback' : u.hostname.toLowerCase();
    return `${host}:${u.port || '6379'}`;
  } catch {
    return url;
  }
}

/** Sandbox nodes reached at a main master's address: `node n is <address>` lines (empty: none). */
export function sharedEndpoints(nodes: ReadonlyArray<{ id: number; urls: readonly string[] }>, main: readonly string[]): string[] {
  const taken = new Set(main.map(endpointOf));
  const out: string[] = [];
  for (const node of nodes) {
    const hit = node.urls.map(endpointOf).find((e) => taken.has(e));
    if (hit) out.push(`sandbox node ${node.id} is at ${hit.replace(/^loopback:/, '127.0.0.1:')}, a main master's address`);
  }
  return out;
}

/** The run_id of the redis-server behind `client` (INFO server), or null when it does not answer. */
export async function runIdOf(client: Redis): Promise<string | null> {
  try {
    const info = await client.info('server');
    return /^run_id:([0-9a-f]+)\s*$/m.exec(info)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Thrown before a run's first command when its nodes include a main master. */
export class SandboxOverlapError extends Error {
  override readonly name = 'SandboxOverlapError';
  constructor(readonly findings: readonly string[]) {
    super(
      `refused: the teaching sandbox includes masters that hold applications' locks (${findings.join('; ')}). Scenarios crash, pause and slow their nodes, so they only run on masters started for them`,
    );
  }
}
