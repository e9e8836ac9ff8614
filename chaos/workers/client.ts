/**
 * A chaos client process. The runner starts K of them (real processes, so that a SIGSTOP pauses a
 * real process) and drives them over IPC: `loop` runs lock loops until `stop` or the loop's own
 * deadline; `rpc` runs one scripted step of a control scenario. Exits when the runner goes away.
 */
import { pathToFileURL } from 'node:url';
import { EventLog } from '../harness/event-log';
import { ATTEMPT_FIELD, encodeVotes, NS_PER_MS, nowNs } from '../harness/history';
import { RegisterClient } from '../harness/register-client';
import type { ClientSettings, ClientToRunner, LoopConfig, RpcOp, RunnerToClient } from '../harness/worker-protocol';
import type * as Core from '@redlock-console/redlock';
import { LeftoverReader } from './leftovers';
import { errorClass, failure, runLockLoop, write } from './lock-loop';
import { acquireSlots, releaseSlots, runSlotLoop, writeSlots, type SlotHeld, type SlotRequest } from './slot-loop';

/** argv: <client index> <run origin (hrtime ns)> <lock core to preload>. */
const client = Number(process.argv[2]);
const origin = BigInt(process.argv[3] ?? '0');
const preload = process.argv[4];
let stopRequested = false;
let armedStopMs: number | null = null;
const cores = new Map<string, Promise<typeof Core>>();

function send(msg: ClientToRunner): void {
  if (process.connected) process.send?.(msg);
}

function loadCore(path: string): Promise<typeof Core> {
  let core = cores.get(path);
  if (!core) cores.set(path, (core = import(pathToFileURL(path).href) as Promise<typeof Core>));
  return core;
}

/**
 * When the core decided each grant, by resource (the 'acquire' event fires at the decision, in the
 * continuation that returns the lock): the hygiene checker forgives a runner's stop of this process
 * only after it (check-hygiene.ts).
 */
const decisions = new Map<string, number>();

function newRedlock(core: typeof Core, urls: string[], settings: ClientSettings): Core.Redlock {
  const redlock = new core.Redlock(urls, { ...settings });
  redlock.on('node-error', () => undefined);
  redlock.on('acquire', (e) => {
    if (e.ok) decisions.set(e.resources.join('\n'), nowNs(origin));
  });
  return redlock;
}

/** The armed self-stop, taken by the first loop that starts an acquire (null: none armed). */
function takeSelfStop(): (() => void) | null {
  if (armedStopMs === null) return null;
  const ms = armedStopMs;
  armedStopMs = null;
  // Stop this very process with SIGSTOP once the commands of the acquire just started are written
  // (queued behind the lock core's own setImmediate flush, if it batched them).
  return () =>
    setImmediate(() => {
      send({ type: 'self-stop', ms });
      process.kill(process.pid, 'SIGSTOP');
    });
}

async function runLoops(config: LoopConfig): Promise<void> {
  stopRequested = false;
  const core = await loadCore(config.corePath);
  const redlock = newRedlock(core, config.urls, config.settings);
  const register = new RegisterClient(config.registerPort);
  const leftovers = new LeftoverReader(config.urls);
  const log = new EventLog(config.logPath);
  const counters = { ok: 0, failed: 0 };
  const progress = setInterval(() => send({ type: 'progress', ...counters }), 250);
  try {
    await register.ready();
    const ctx = {
      client,
      origin,
      config,
      redlock,
      register,
      leftovers,
      decisions,
      log,
      counters,
      stopped: () => stopRequested,
      takeSelfStop,
      send,
    };
    const loops = Array.from({ length: config.loops }, (_, i) => runLockLoop(ctx, i, false));
    for (let i = 0; i < config.longLoops; i++) loops.push(runLockLoop(ctx, config.loops + i, true));
    for (let i = 0; i < config.slotLoops; i++) loops.push(runSlotLoop(ctx, config.loops + config.longLoops + i));
    await Promise.all(loops);
  } finally {
    clearInterval(progress);
    armedStopMs = null;
    log.close();
    register.close();
    leftovers.close();
    await redlock.quit();
  }
  send({ type: 'loop-done', ...counters, events: log.size });
}

/** State of a scripted (control) session: one Redlock and the locks it holds, by resource. */
interface Session {
  tag: string;
  redlock: Core.Redlock;
  register: RegisterClient;
  leftovers: LeftoverReader;
  log: EventLog;
  locks: Map<string, { lock: Core.Lock; id: string }>;
  /** Slot grants, by `<kind>:<name>`. */
  slots: Map<string, { held: SlotHeld; req: SlotRequest }>;
  keyPrefix: string;
  seq: number;
}
let session: Session | null = null;

async function rpc(op: RpcOp): Promise<unknown> {
  const now = () => nowNs(origin);
  if (op.op === 'open') {
    const core = await loadCore(op.corePath);
    const register = new RegisterClient(op.registerPort);
    await register.ready();
    session = {
      tag: op.tag,
      redlock: newRedlock(core, op.urls, op.settings),
      register,
      leftovers: new LeftoverReader(op.urls),
      log: new EventLog(op.logPath),
      locks: new Map(),
      slots: new Map(),
      keyPrefix: op.settings.keyPrefix,
      seq: 0,
    };
    return null;
  }
  const s = session;
  if (!s) throw new Error('no session: send open first');
  switch (op.op) {
    case 'acquire': {
      const id = `${s.tag}.${client}.${s.seq++}`;
      s.log.push({ e: 'acquire-invoke', lock: id, client, resource: op.resource, fenced: op.fenced, t: now() });
      try {
        const lock = await s.redlock.acquire(op.resource, op.ttlMs, {
          fenced: op.fenced,
          retryCount: op.retryCount,
          retryDelayMs: 20,
          retryJitterMs: 10,
          metadata: { [ATTEMPT_FIELD]: id },
        });
        const ok = now();
        const validityAtReturnMs = lock.expiresAt - Date.now();
        s.log.push({
          e: 'acquire-ok',
          lock: id,
          t: ok,
          validUntil: ok + lock.validityMs * NS_PER_MS,
          fence: lock.fence,
          votes: encodeVotes(lock.votes),
          validityAtReturnMs,
        });
        s.locks.set(op.resource, { lock, id });
        return { granted: true, fence: lock.fence, validityMs: lock.validityMs, votes: encodeVotes(lock.votes) };
      } catch (err) {
        s.log.push(await failure(s, id, op.resource, err, now()));
        // The votes of the last attempt (every RedlockError but InvalidArgumentError carries them).
        const votes = (err as { votes?: readonly { vote: string; reason: string }[] }).votes;
        return {
          granted: false,
          error: errorClass(err),
          message: err instanceof Error ? err.message : String(err),
          votes: Array.isArray(votes) ? encodeVotes(votes) : null,
        };
      }
    }
    case 'acquire-slots': {
      const id = `${s.tag}.${client}.${s.seq++}`;
      const { op: _op, ...spec } = op;
      const req: SlotRequest = { ...spec, retryDelayMs: 20, retryJitterMs: 10 };
      const held = await acquireSlots({ ...s, client, origin, decisions }, req, id);
      if (!held) return { granted: false };
      s.slots.set(`${op.kind}:${op.name}`, { held, req });
      return { granted: true, fence: held.lock.fence, slots: held.slots, votes: encodeVotes(held.lock.votes) };
    }
    case 'write': {
      const slot = s.slots.get(op.resource);
      if (slot) {
        await writeSlots({ register: s.register, log: s.log, origin }, slot.held, slot.req);
        return { accepted: true };
      }
      const held = s.locks.get(op.resource);
      if (!held) throw new Error(`no lock held on ${op.resource}`);
      return { accepted: await write({ register: s.register, log: s.log, origin }, op.resource, held.lock, held.id) };
    }
    case 'release': {
      const slot = s.slots.get(op.resource);
      if (slot) {
        s.slots.delete(op.resource);
        return { released: true, votes: await releaseSlots({ log: s.log, origin }, slot.held) };
      }
      const held = s.locks.get(op.resource);
      if (!held) return { released: false };
      s.locks.delete(op.resource);
      s.log.push({ e: 'release-invoke', lock: held.id, t: now() });
      // The final votes (every node answered), as the checker judges them; see lock-loop.ts.
      const answered = await held.lock.release();
      const result = await (answered.settled ?? answered);
      s.log.push({ e: 'release-ok', lock: held.id, t: now(), votes: encodeVotes(result.votes) });
      return { released: true, votes: encodeVotes(result.votes) };
    }
    case 'close': {
      session = null;
      s.log.close();
      s.register.close();
      s.leftovers.close();
      await s.redlock.quit();
      return { events: s.log.size };
    }
  }
}

process.on('message', (msg: RunnerToClient) => {
  switch (msg.type) {
    case 'loop':
      runLoops(msg.config).catch((err: unknown) =>
        send({ type: 'fatal', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
      return;
    case 'stop':
      stopRequested = true;
      return;
    case 'arm-self-stop':
      armedStopMs = msg.ms;
      return;
    case 'rpc': {
      const { id, type: _type, ...op } = msg;
      rpc(op).then(
        (value) => send({ type: 'rpc-result', id, ok: true, value }),
        (err: unknown) =>
          send({ type: 'rpc-result', id, ok: false, error: errorClass(err), message: err instanceof Error ? err.message : String(err) }),
      );
      return;
    }
  }
});
process.on('disconnect', () => process.exit(0));
// A rejection nobody handled (e.g. inside a library on a connection that closed) would end the
// process; report it instead, so the run shows it without losing the phase.
process.on('unhandledRejection', (reason: unknown) => {
  send({ type: 'unhandled', message: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) });
});
// Compile and load the core now, so that the first phase does not pay for it.
(preload ? loadCore(preload) : Promise.resolve()).then(
  () => send({ type: 'ready' }),
  (err: unknown) => send({ type: 'fatal', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
);
