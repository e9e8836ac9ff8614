import { fork, type ChildProcess } from 'node:child_process';
import { request, type ClientRequest } from 'node:http';

/**
 * Open live-event streams (`GET /api/events`) read in a process of their own, as browsers would read
 * them from other machines: the bench's lock loops then do not share an event loop with 200 SSE
 * readers (which would be measured as the server's slowness), though the readers still share this
 * machine's cores. The parent talks to the child over IPC: `reset` zeroes the counts, `report`
 * answers them, `close` ends the streams and the child.
 */
export interface StreamReport {
  /** Per stream: did it say `connected`, and how many events of each type it read. */
  streams: Array<{ connected: boolean; counts: Record<string, number> }>;
}

type Request = { kind: 'reset' } | { kind: 'report' } | { kind: 'close' };

export class StreamReaders {
  private constructor(private readonly child: ChildProcess) {}

  static async open(base: string, cookie: string, count: number): Promise<StreamReaders> {
    const child = fork(import.meta.filename, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, STREAM_BASE: base, STREAM_COOKIE: cookie, STREAM_COUNT: String(count) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the stream readers exited (${code}) before they started`)));
    });
    return new StreamReaders(child);
  }

  reset(): Promise<void> {
    return this.ask({ kind: 'reset' }).then(() => undefined);
  }

  report(): Promise<StreamReport> {
    return this.ask({ kind: 'report' }) as Promise<StreamReport>;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ kind: 'close' } satisfies Request);
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }

  private ask(message: Request): Promise<unknown> {
    return new Promise((resolve) => {
      this.child.once('message', resolve);
      this.child.send(message);
    });
  }
}

/** One open event stream; counts the events it reads by type. */
class Stream {
  counts: Record<string, number> = {};
  /** It said `connected` (its subscriptions are in place). */
  connected = false;
  private readonly req: ClientRequest;
  private tail = '';
  /** The type of the message whose lines are being read. */
  private last = '';

  constructor(base: string, cookie: string) {
    this.req = request(`${base}/api/events`, { headers: { cookie, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.read(chunk));
      res.on('error', () => undefined);
    });
    this.req.on('error', () => undefined);
    this.req.end();
  }

  close(): void {
    this.req.destroy();
  }

  private read(chunk: string): void {
    const text = this.tail + chunk;
    const lines = text.split('\n');
    this.tail = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith(': connected')) this.connected = true;
      if (line.startsWith('event: ')) {
        this.last = line.slice('event: '.length);
        this.counts[this.last] = (this.counts[this.last] ?? 0) + 1;
      } else if (line.startsWith('data: ') && this.last === 'lock.burst') {
        // A summary of a window's lock changes: each counted under its own type.
        const { counts } = JSON.parse(line.slice('data: '.length)) as { counts: Record<string, number> };
        for (const [type, n] of Object.entries(counts)) this.counts[type] = (this.counts[type] ?? 0) + n;
      }
    }
  }
}

/** The child: open the streams, then answer the parent. */
function child(): void {
  const streams = Array.from(
    { length: Number(process.env.STREAM_COUNT) },
    () => new Stream(process.env.STREAM_BASE!, process.env.STREAM_COOKIE!),
  );
  process.on('message', (message: Request) => {
    if (message.kind === 'reset') {
      for (const s of streams) s.counts = {};
      process.send!({ kind: 'reset' });
    } else if (message.kind === 'report') {
      process.send!({ streams: streams.map((s) => ({ connected: s.connected, counts: s.counts })) } satisfies StreamReport);
    } else {
      for (const s of streams) s.close();
      process.exit(0);
    }
  });
  process.send!({ kind: 'started' });
}

if (process.send && process.env.STREAM_COUNT) child();
