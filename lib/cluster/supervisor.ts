import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';
import { FaultProxy } from '../faults';
import type { NodeAction } from '../api/node-actions';
import { deleteMarker } from './continuity';
import { assertPortsFree, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options';
import { ClusterConfigError, NodeActionError } from './errors';
import { Lifeline } from './lifeline';
import { memberStatus, urlOf, type Member, type NodeStatus, type SupervisorContext } from './member';
import { performAction } from './perform-action';
import { startNode, stopNode } from './node-lifecycle';
import { RedisNode, type NodeExit } from './node-process';
import type { Persistence } from './persistence';
import { PidRegistry } from './pid-registry';
import { freePort } from './ports';
import { findRedisServer, REDIS_MISSING_HINT } from './redis-binary';
import { ensureSecretFile } from './secret';
import { atNode } from '../node-number';

export type { ClusterOptions } from './cluster-options';
export type { NodeStatus } from './member';

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
  /** What the node lifecycle (node-lifecycle.ts) and the node actions (perform-action.ts) use of this supervisor. */
  private readonly ctx: SupervisorContext;
  private closed = false;
  private readonly exitHook = () => this.killAllSync();

  private constructor(private readonly options: ResolvedClusterOptions) {
    super();
    this.password = options.password === undefined ? ensureSecretFile(join(options.dataRoot, 'redis.secret')) : options.password;
    this.registry = new PidRegistry(join(options.dataRoot, 'pids.json'));
    this.lifeline = options.lifeline === false ? null : new Lifeline();
    this.ctx = {
      password: this.password,
      keyPrefix: options.keyPrefix,
      maxTtlMs: options.maxTtlMs,
      isClosed: () => this.closed,
      emit: (event, ...args) => this.emit(event, ...args),
    };
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
      keyPrefix: DEFAULT_SETTINGS.keyPrefix,
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
        await startNode(supervisor.ctx, member, persistence(i), fresh);
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
    return this.members.map((m) => urlOf(this.password, m.node.host, m.node.port));
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
    const run = member.queue.then(() => performAction(this.ctx, member, action));
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
        await stopNode(this.ctx, m).catch(() => undefined);
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

  private status(m: Member): NodeStatus {
    return memberStatus(m, this.password);
  }

  private member(id: number): Member {
    const member = Number.isInteger(id) ? atNode(this.members, id) : undefined;
    if (!member) throw new NodeActionError(`there is no node ${id} (nodes are 1…${this.members.length})`, 'NOT_FOUND');
    return member;
  }
}
