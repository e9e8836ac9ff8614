import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { FaultProxy, type FaultMode } from '../faults';
import { markNodeClean } from '@redlock-console/redlock';
import type { NodeAction } from '../api/node-actions';
import {
  adoptAfterStart,
  deleteMarker,
  keepsData,
  readAndShutdown,
  takeMarker,
  writeMarker,
  type ContinuityOutcome,
  type DirectAddress,
  type StoppedIncarnation,
} from './continuity';
import { ClusterConfigError, NodeActionError } from './errors';
import { Lifeline } from './lifeline';
import { RedisNode, type NodeExit, type NodeState } from './node-process';
import type { Persistence } from './persistence';
import { PidRegistry } from './pid-registry';
import { freePort, isPortFree } from './ports';
import { findRedisServer, REDIS_MISSING_HINT } from './redis-binary';
import { ensureSecretFile } from './secret';

export interface ClusterOptions {
  /** Directory holding one data directory per node (`node-1` …) and the pid registry. */
  dataRoot: string;
  /** Number of masters, 1…15. @default 5 */
  nodes?: number;
  host?: string;
  /** redis-server of node i listens on portBase + i − 1; omit for any free ports. */
  portBase?: number;
  /** With proxies, the proxy of node i listens on proxyPortBase + i − 1; omit for any free ports. */
  proxyPortBase?: number;
  /** Put a fault proxy in front of every node (clients use the proxy's port). @default true */
  proxies?: boolean;
  /** One mode for all nodes, or one per node. @default 'aof-always' */
  persistence?: Persistence | readonly Persistence[];
  /** Path of redis-server; found on PATH when omitted. */
  binary?: string;
  /** Key prefix and lease ceiling written into the clean epoch sentinel of brand-new data dirs. */
  keyPrefix?: string;
  maxTtlMs?: number;
  extraArgs?: readonly string[];
  /** Spawn the watchdog that kills the nodes if this process dies abruptly. @default true */
  lifeline?: boolean;
  /**
   * The password every node requires (`requirepass`, in a 0600 config file, never on a command
   * line). Omitted: generated once into `<dataRoot>/redis.secret` (0600) and kept. null: none (a
   * harness that builds its own connections, e.g. the chaos harness and the bench).
   */
  password?: string | null;
}

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

interface Member {
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
  /** The proxy's mode while it holds clients back during a start (see gate()), else null. */
  gatedMode: FaultMode | null;
}

/**
 * Runs N independent redis-server masters on one host, each with its own data directory and an
 * optional fault proxy in front. Every action resolves once the node has reached its new state.
 *
 * Lifetime: nodes never outlive the supervisor. `shutdown()` stops them gracefully; a process
 * 'exit' hook SIGKILLs any still running (e.g. after an uncaught error that calls process.exit);
 * the lifeline watchdog kills them if this process is killed outright; and a pid registry lets the
 * next supervisor on the same data root reap what even the watchdog missed.
 *
 * Continuity (continuity.ts): a node stopped gracefully with its persistence flushed and started
 * again unchanged keeps its epoch sentinel (no restart quarantine); a crash never does.
 *
 * Events: 'node-up' (id, pid), 'node-down' (id, NodeExit), 'graceful-stop' (id, StoppedIncarnation),
 * 'continuity' (id, ContinuityOutcome), 'fault' (id, FaultMode), 'node-error' (id, Error), 'shutdown'.
 */
export class ClusterSupervisor extends EventEmitter {
  private readonly members: Member[] = [];
  private readonly password: string | null;
  private readonly lifeline: Lifeline | null;
  private readonly registry: PidRegistry;
  private closed = false;
  private readonly exitHook = () => this.killAllSync();

  private constructor(
    private readonly options: Required<Pick<ClusterOptions, 'dataRoot' | 'host' | 'keyPrefix' | 'maxTtlMs'>> & ClusterOptions,
  ) {
    super();
    this.password = options.password === undefined ? ensureSecretFile(join(options.dataRoot, 'redis.secret')) : options.password;
    this.registry = new PidRegistry(join(options.dataRoot, 'pids.json'));
    this.lifeline = options.lifeline === false ? null : new Lifeline();
    process.once('exit', this.exitHook);
  }

  static async start(options: ClusterOptions): Promise<ClusterSupervisor> {
    const count = options.nodes ?? 5;
    if (!Number.isInteger(count) || count < 1 || count > 15) {
      throw new ClusterConfigError(`the number of nodes must be a whole number from 1 to 15, got ${count}`, 'BAD_CONFIG');
    }
    const binary = options.binary ?? findRedisServer();
    if (!binary) throw new ClusterConfigError(REDIS_MISSING_HINT, 'REDIS_MISSING');
    const persistence = (i: number): Persistence =>
      typeof options.persistence === 'string' ? options.persistence : (options.persistence?.[i] ?? 'aof-always');

    mkdirSync(options.dataRoot, { recursive: true, mode: 0o700 });
    const supervisor = new ClusterSupervisor({
      host: '127.0.0.1',
      keyPrefix: 'rl:',
      maxTtlMs: 60_000,
      ...options,
      binary,
    });
    supervisor.registry.reapStale();
    try {
      const host = supervisor.options.host;
      await assertPortsFree(host, options.portBase, count, 'REDLOCK_SERVER_PORT_BASE');
      if (options.proxies !== false) await assertPortsFree(host, options.proxyPortBase, count, 'REDLOCK_PORT_BASE');
      for (let i = 0; i < count; i++) {
        const id = i + 1;
        const dataDir = join(options.dataRoot, `node-${id}`);
        const fresh = !existsSync(dataDir);
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        const port = options.portBase !== undefined ? options.portBase + i : await freePort(host);
        const node = new RedisNode({ id, port, host, dataDir, binary, extraArgs: options.extraArgs, password: supervisor.password });
        const member: Member = {
          node,
          proxy: null,
          queue: Promise.resolve(),
          restartTimer: null,
          restartAt: null,
          nextPersistence: persistence(i),
          continuity: null,
          resumable: null,
          gatedMode: null,
        };
        supervisor.members.push(member);
        supervisor.wire(member);
        // Before its proxy exists: no client can reach the node until it is marked or adopted.
        await supervisor.startNode(member, persistence(i), fresh);
        if (options.proxies !== false) {
          const proxy = new FaultProxy({
            name: `node-${id}`,
            targetHost: host,
            targetPort: port,
            listenHost: host,
            listenPort: options.proxyPortBase !== undefined ? options.proxyPortBase + i : 0,
          });
          await proxy.start();
          member.proxy = proxy;
        }
      }
    } catch (err) {
      await supervisor.shutdown();
      throw err;
    }
    return supervisor;
  }

  get size(): number {
    return this.members.length;
  }

  /** Client URLs, one per node, in node order (through the proxies when there are any). */
  urls(): string[] {
    return this.members.map((m) => this.status(m).url);
  }

  /** Direct URLs of the redis-server processes, bypassing the proxies (tests and the supervisor only). */
  directUrls(): string[] {
    return this.members.map((m) => this.urlOf(m.node.host, m.node.port));
  }

  /** `redis://[:password@]host:port` (the password is base64url: nothing to escape). */
  private urlOf(host: string, port: number): string {
    return this.password !== null ? `redis://:${this.password}@${host}:${port}` : `redis://${host}:${port}`;
  }

  private addressOf(node: RedisNode): DirectAddress {
    return { host: node.host, port: node.port, password: this.password };
  }

  nodes(): NodeStatus[] {
    return this.members.map((m) => this.status(m));
  }

  node(id: number): NodeStatus {
    return this.status(this.member(id));
  }

  proxy(id: number): FaultProxy {
    const proxy = this.member(id).proxy;
    if (!proxy) throw new NodeActionError(`node ${id} has no fault proxy (the cluster was started without proxies)`, 'NO_PROXY');
    return proxy;
  }

  /** Run one action on node `id`; actions on the same node run one after another. */
  act(id: number, action: NodeAction): Promise<NodeStatus> {
    const member = this.member(id);
    if (this.closed) return Promise.reject(new NodeActionError('the cluster is shutting down', 'BAD_STATE'));
    const run = member.queue.then(() => this.perform(member, action));
    member.queue = run.catch(() => undefined);
    return run.then(() => this.status(member));
  }

  crash(id: number) {
    return this.act(id, { action: 'crash' });
  }
  stop(id: number) {
    return this.act(id, { action: 'stop' });
  }
  start(id: number, persistence?: Persistence) {
    return this.act(id, { action: 'start', persistence });
  }
  restart(id: number, options: { persistence?: Persistence; delayMs?: number } = {}) {
    return this.act(id, { action: 'restart', ...options });
  }
  pause(id: number) {
    return this.act(id, { action: 'pause' });
  }
  resume(id: number) {
    return this.act(id, { action: 'resume' });
  }
  partition(id: number) {
    return this.act(id, { action: 'partition' });
  }
  heal(id: number) {
    return this.act(id, { action: 'heal' });
  }

  /** Resolves once node `id` is up (e.g. after a delayed restart). */
  async waitUntilUp(id: number, timeoutMs = 20_000): Promise<NodeStatus> {
    const member = this.member(id);
    const deadline = Date.now() + timeoutMs;
    while (member.node.state !== 'up') {
      if (Date.now() > deadline) throw new NodeActionError(`node ${id} did not come up within ${timeoutMs} ms`, 'BAD_STATE');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.status(member);
  }

  /** Stop every node gracefully and close the proxies. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const m of this.members) {
      if (m.restartTimer) clearTimeout(m.restartTimer);
      m.restartTimer = null;
    }
    await Promise.all(
      this.members.map(async (m) => {
        await m.proxy?.close().catch(() => undefined);
        await this.stopNode(m).catch(() => undefined);
      }),
    );
    this.lifeline?.close();
    process.removeListener('exit', this.exitHook);
    this.emit('shutdown');
  }

  /** For 'exit' handlers and fatal errors: SIGKILL every node now, synchronously. */
  killAllSync(): void {
    for (const m of this.members) {
      if (m.node.pid === null) continue;
      m.resumable = null;
      deleteMarker(m.node.dataDir); // a crash is never graceful
      m.node.killSync();
    }
  }

  private async perform(member: Member, action: NodeAction): Promise<void> {
    const { node } = member;
    switch (action.action) {
      case 'crash':
        this.cancelRestart(member);
        deleteMarker(node.dataDir); // a crash is never graceful, whatever a stale marker says
        member.resumable = null;
        return node.crash();
      case 'stop':
        this.cancelRestart(member);
        return this.stopNode(member);
      case 'start':
        this.cancelRestart(member);
        if (node.state !== 'down') throw new NodeActionError(`node ${node.id} is ${node.state}; stop or crash it first`, 'BAD_STATE');
        return this.startNode(member, action.persistence ?? member.nextPersistence);
      case 'restart': {
        this.cancelRestart(member);
        const persistence = action.persistence ?? node.persistence;
        member.nextPersistence = persistence;
        await this.stopNode(member);
        if (!action.delayMs) return this.startNode(member, persistence);
        member.restartAt = Date.now() + action.delayMs;
        member.restartTimer = setTimeout(() => {
          member.restartTimer = null;
          member.restartAt = null;
          const run = member.queue.then(() => (node.state === 'down' && !this.closed ? this.startNode(member, persistence) : undefined));
          member.queue = run.catch((err) => this.emit('node-error', node.id, err));
        }, action.delayMs);
        member.restartTimer.unref();
        return;
      }
      case 'pause':
        return node.pause();
      case 'resume':
        return node.resume();
      case 'partition':
        return this.setFault(member, { kind: 'blackhole' });
      case 'heal':
        return this.setFault(member, { kind: 'pass' });
      case 'reset':
        return this.setFault(member, { kind: 'reset' });
      case 'latency': {
        const jitter = action.jitterMs ?? 0;
        return this.setFault(member, {
          kind: 'latency',
          upMs: Math.floor(action.latencyMs / 2),
          upJitterMs: Math.floor(jitter / 2),
          downMs: Math.ceil(action.latencyMs / 2),
          downJitterMs: Math.ceil(jitter / 2),
        });
      }
    }
  }

  private setFault(member: Member, mode: FaultMode): void {
    if (!member.proxy) throw new NodeActionError(`node ${member.node.id} has no fault proxy`, 'NO_PROXY');
    member.proxy.setMode(mode);
    this.emit('fault', member.node.id, mode);
  }

  private cancelRestart(member: Member): void {
    if (member.restartTimer) clearTimeout(member.restartTimer);
    member.restartTimer = null;
    member.restartAt = null;
  }

  /**
   * Stop a node gracefully. With a persistence that keeps data, the server is asked to SHUTDOWN
   * with it flushed after its run_id and sentinel were read, and a clean exit (code 0) leaves a
   * continuity marker for its next start. Any older marker is gone first.
   */
  private async stopNode(member: Member): Promise<void> {
    const { node } = member;
    if (node.pid === null) return;
    deleteMarker(node.dataDir);
    member.resumable = null;
    const persistence = node.persistence;
    let reading = null as Promise<StoppedIncarnation> | null;
    const shutdown =
      keepsData(persistence) && node.state !== 'starting'
        ? () => (reading = readAndShutdown(this.addressOf(node), persistence, this.options.keyPrefix))
        : undefined;
    const exit = await node.stop(shutdown);
    // The exit can be seen before the SHUTDOWN's connection closes: wait for the reading itself.
    const seen = reading ? await (reading as Promise<StoppedIncarnation>).catch(() => null) : null;
    if (seen && exit && exit.code === 0 && exit.signal === null) {
      writeMarker(node.dataDir, {
        version: 1,
        runId: seen.runId,
        persistence,
        keyPrefix: this.options.keyPrefix,
        quarantineUntil: seen.quarantineUntil,
        stoppedAt: exit.at,
      });
      member.resumable = persistence;
      this.emit('graceful-stop', node.id, seen);
    }
  }

  /**
   * Start a node and settle its epoch before clients count on it: a brand-new data directory is
   * marked clean; otherwise the continuity marker (consumed here, whatever happens) decides whether
   * the restart is adopted. While that runs, the node's proxy holds new client connections back.
   */
  private async startNode(member: Member, persistence: Persistence, fresh = false): Promise<void> {
    const { node } = member;
    const marker = takeMarker(node.dataDir);
    member.resumable = null;
    const lastExit = describeExit(node.lastExit, node.persistence);
    const open = marker ? this.gate(member) : () => undefined;
    try {
      await node.start(persistence);
      if (fresh) {
        await this.markClean(member, 'fresh data directory');
        member.continuity = null;
        return;
      }
      const outcome = await adoptAfterStart(this.addressOf(node), marker, { persistence, keyPrefix: this.options.keyPrefix, lastExit });
      member.continuity = outcome;
      this.emit('continuity', node.id, outcome);
    } finally {
      open();
    }
  }

  /**
   * Hold new client connections in the node's proxy (a blackhole: bytes are kept, none dropped,
   * and the upstream is opened on release) while it starts and its restart is adopted, so that no
   * client's check quarantines it first. A partition or reset the operator set stays as it is.
   * Returns the release.
   */
  private gate(member: Member): () => void {
    const proxy = member.proxy;
    const mode = proxy?.mode;
    if (!proxy || !mode || (mode.kind !== 'pass' && mode.kind !== 'latency')) return () => undefined;
    member.gatedMode = mode;
    proxy.setMode({ kind: 'blackhole' });
    return () => {
      member.gatedMode = null;
      proxy.setMode(mode);
    };
  }

  private async markClean(member: Member, origin: string): Promise<void> {
    const client = new Redis({
      host: member.node.host,
      port: member.node.port,
      ...(this.password !== null ? { password: this.password } : {}),
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await markNodeClean(client, { keyPrefix: this.options.keyPrefix, maxTtlMs: this.options.maxTtlMs, origin });
    } finally {
      client.disconnect();
    }
  }

  private wire(member: Member): void {
    const { node } = member;
    node.on('spawn', (pid: number) => {
      this.lifeline?.watch(pid);
      this.registry.set(node.id, pid, node.port);
      this.emit('node-up', node.id, pid);
    });
    node.on('exit', (pid: number, exit: NodeExit) => {
      this.lifeline?.forget(pid);
      this.registry.delete(node.id, pid);
      this.emit('node-down', node.id, exit);
    });
  }

  private member(id: number): Member {
    const member = Number.isInteger(id) ? this.members[id - 1] : undefined;
    if (!member) throw new NodeActionError(`there is no node ${id} (nodes are 1…${this.members.length})`, 'NOT_FOUND');
    return member;
  }

  private status(m: Member): NodeStatus {
    const { node, proxy } = m;
    const proxyPort = proxy ? proxy.port : null;
    return {
      id: node.id,
      state: node.state,
      pid: node.pid,
      host: node.host,
      port: node.port,
      proxyPort,
      url: this.urlOf(node.host, proxyPort ?? node.port),
      directUrl: this.urlOf(node.host, node.port),
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
}

/** The last exit, as a restart's log line says it (`persistence`: the mode the process ran with). */
function describeExit(exit: NodeExit | null, persistence: Persistence): string {
  if (!exit) return 'none seen by this supervisor';
  if (exit.signal) return exit.signal;
  return exit.code === 0 && persistence === 'none' ? 'a stop without persistence' : `code ${exit.code}`;
}

async function assertPortsFree(host: string, base: number | undefined, count: number, envName: string): Promise<void> {
  if (base === undefined) return;
  if (!Number.isInteger(base) || base < 1 || base + count - 1 > 65_535) {
    throw new ClusterConfigError(`${envName} must be a port from 1 to ${65_536 - count}, got ${base}`, 'BAD_CONFIG');
  }
  for (let port = base; port < base + count; port++) {
    if (!(await isPortFree(port, host))) {
      throw new ClusterConfigError(
        `port ${port} on ${host} is already in use (another redlock-console or redis-server?); stop it or set ${envName} to a free range`,
        'PORT_IN_USE',
      );
    }
  }
}
