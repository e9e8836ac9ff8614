import type { FaultMode, FaultProxy } from '../faults';
import type { ContinuityOutcome, DirectAddress } from './continuity';
import type { NodeExit, NodeState, RedisNode } from './node-process';
import type { Persistence } from './persistence';

export interface NodeStatus {
  id: number;
  state: NodeState;
  pid: number | null;
  host: string;
  /** Port of the redis-server process itself. */
  port: number;
  /** Port of the node's fault proxy, the one clients use; null without proxies. */
  proxyPort: number | null;
  /** The URL clients connect to (through the proxy when there is one), with the password. */
  url: string;
  /** The redis-server process's own URL, bypassing the proxy, with the password. */
  directUrl: string;
  persistence: Persistence;
  startedAt: number | null;
  uptimeMs: number | null;
  dataDir: string;
  lastExit: NodeExit | null;
  fault: FaultMode | null;
  /** Epoch ms of a scheduled delayed start, else null. */
  restartAt: number | null;
  /** What the supervisor did about the node's last start: adopted a graceful restart, or why not (null: a fresh data directory). */
  continuity: ContinuityOutcome | null;
  /** A down node stopped gracefully with this persistence: started again with the same one, its restart is adopted. Else null. */
  resumable: Persistence | null;
}

export interface Member {
  node: RedisNode;
  proxy: FaultProxy | null;
  /** Serializes actions on one node. */
  queue: Promise<unknown>;
  restartTimer: NodeJS.Timeout | null;
  restartAt: number | null;
  nextPersistence: Persistence;
  continuity: ContinuityOutcome | null;
  /** The persistence of the continuity marker this supervisor wrote and no start has consumed yet. */
  resumable: Persistence | null;
  /** The proxy's mode while it holds clients back during a start (see gate() in node-lifecycle.ts), else null. */
  gatedMode: FaultMode | null;
}

/** What the node lifecycle and the node actions need of their supervisor. */
export interface SupervisorContext {
  readonly password: string | null;
  readonly keyPrefix: string;
  readonly maxTtlMs: number;
  /** True once the supervisor is shutting down. */
  isClosed(): boolean;
  emit(event: string, ...args: unknown[]): boolean;
}

/** `redis://[:password@]host:port` (the password is base64url: nothing to escape). */
export function urlOf(password: string | null, host: string, port: number): string {
  return password !== null ? `redis://:${password}@${host}:${port}` : `redis://${host}:${port}`;
}

export function addressOf(node: RedisNode, password: string | null): DirectAddress {
  return { host: node.host, port: node.port, password };
}

export function memberStatus(m: Member, password: string | null): NodeStatus {
  const { node, proxy } = m;
  const proxyPort = proxy ? proxy.port : null;
  return {
    id: node.id,
    state: node.state,
    pid: node.pid,
    host: node.host,
    port: node.port,
    proxyPort,
    url: urlOf(password, node.host, proxyPort ?? node.port),
    directUrl: urlOf(password, node.host, node.port),
    persistence: node.state === 'down' ? m.nextPersistence : node.persistence,
    startedAt: node.startedAt,
    uptimeMs: node.startedAt === null ? null : Date.now() - node.startedAt,
    dataDir: node.dataDir,
    lastExit: node.lastExit,
    fault: proxy ? (m.gatedMode ?? proxy.mode) : null,
    restartAt: m.restartAt,
    continuity: m.continuity,
    resumable: node.state === 'down' ? m.resumable : null,
  };
}
