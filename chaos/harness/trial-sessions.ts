/**
 * What every targeted trial's clients share: their sessions in the chaos client processes and a
 * single acquire (chaos/harness/targeted.ts, targeted-reseed.ts).
 */
import { join } from 'node:path';
import type { RunContext } from './run-context';
import type { ClientSettings } from './worker-protocol';
import type { ClientWorker } from './workers';

/** A trial's answer to one acquire (the worker's reply). */
export interface Granted {
  granted: boolean;
  fence?: number | null;
  validityMs?: number;
  votes?: string | null;
  error?: string;
}

/** The trial a session belongs to: its id names the logs. */
interface SessionOwner {
  id: string;
  core: { indexPath: string };
}

/** A trial's client sessions (A, B and S run in client processes 0, 1 and 2) and their logs. */
export class Sessions {
  readonly logs: string[] = [];
  private readonly open: ClientWorker[] = [];
  constructor(
    private readonly run: RunContext,
    private readonly spec: SessionOwner,
  ) {}

  async start(index: number, urls: string[], settings: ClientSettings): Promise<ClientWorker> {
    const worker = this.run.workers.clients[index];
    if (!worker) throw new Error(`targeted trials need ${index + 1} client processes`);
    const logPath = join(this.run.workDir, `${this.spec.id}.client-${index}.jsonl`);
    await worker.rpc({
      op: 'open',
      corePath: this.spec.core.indexPath,
      urls,
      settings,
      registerPort: this.run.workers.register.port,
      logPath,
      tag: this.spec.id,
    });
    this.logs.push(logPath);
    this.open.push(worker);
    return worker;
  }

  async close(): Promise<void> {
    await Promise.all(this.open.splice(0).map((w) => w.rpc({ op: 'close' }).catch(() => undefined)));
  }
}

/** One fenced acquire by a trial's client, with `retryCount` retries. */
export function acquire(c: ClientWorker, resource: string, ttlMs: number, retryCount: number): Promise<Granted> {
  return c.rpc({ op: 'acquire', resource, ttlMs, fenced: true, retryCount }) as Promise<Granted>;
}

/**
 * Single fenced attempts, 50 ms apart, until one is granted or `forMs` has passed: for a client that
 * waits out something the trial arranged (quarantines, a key left to expire).
 */
export async function acquireUntilGranted(c: ClientWorker, resource: string, ttlMs: number, forMs: number): Promise<Granted> {
  const deadline = performance.now() + forMs;
  let granted: Granted = { granted: false };
  while (!granted.granted && performance.now() < deadline) {
    granted = await acquire(c, resource, ttlMs, 0);
    if (!granted.granted) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return granted;
}
