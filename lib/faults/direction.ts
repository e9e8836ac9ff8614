/**
 * One direction of a proxied connection (up: client → server, down: server → client): an ordered
 * queue every byte passes through. Blackhole holds bytes (bounded, never dropped or reordered),
 * latency releases them on a schedule that only moves forward, pass releases them at once; the
 * writer's backpressure and the queue bound pause the reading socket.
 */
import type { Socket } from 'node:net';
import type { ConnectionHost, FlowDirection } from './connection';

/** What a direction needs from its connection. */
export interface DirectionOwner {
  readonly isFinished: boolean;
  sourceOf(direction: FlowDirection): Socket | null;
  destinationOf(direction: FlowDirection): Socket | null;
  overflow(direction: FlowDirection, bytes: number): void;
  /** The FIN this direction passed on is flushed. */
  finPassed(direction: FlowDirection): void;
}

interface Chunk {
  readonly data: Buffer;
  /** When the proxy read it (performance.now()). */
  readonly at: number;
  /** When it may be written on; Infinity while held by a blackhole. */
  deliverAt: number;
}

const now = (): number => performance.now();

export class Direction {
  private chunks: Chunk[] = [];
  private head = 0;
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private waitingDrain = false;
  /** The destination is gone: whatever comes from the source has nowhere to go. */
  private discarding = false;
  /** The source sent FIN; pass it on once the queue is empty. */
  sourceEnded = false;
  private finSent = false;

  constructor(
    readonly name: FlowDirection,
    private readonly conn: DirectionOwner,
    private readonly host: ConnectionHost,
  ) {}

  get pending(): number {
    return this.chunks.length - this.head;
  }

  push(data: Buffer): void {
    if (this.discarding || this.conn.isFinished) return;
    const mode = this.host.mode();
    if (mode.kind === 'blackhole') {
      if (this.queuedBytes + data.length > this.host.maxBufferBytes) {
        this.conn.overflow(this.name, this.queuedBytes + data.length);
        return;
      }
      this.enqueue({ data, at: now(), deliverAt: Number.POSITIVE_INFINITY });
      return;
    }
    const at = now();
    const tail = this.chunks[this.chunks.length - 1];
    const earliest = this.pending > 0 && tail ? tail.deliverAt : Number.NEGATIVE_INFINITY;
    this.enqueue({ data, at, deliverAt: Math.max(earliest, at + this.delay()) });
    this.pump();
  }

  /** Writes every chunk that is due, arms a timer for the next one, passes FIN on, adjusts flow. */
  pump(): void {
    if (this.conn.isFinished || this.discarding) return;
    const kind = this.host.mode().kind;
    if (kind === 'blackhole' || kind === 'reset') return;
    const dest = this.conn.destinationOf(this.name);
    if (dest !== null && !this.waitingDrain) {
      while (this.pending > 0) {
        const chunk = this.chunks[this.head]!;
        const t = now();
        if (chunk.deliverAt > t) {
          this.arm(chunk.deliverAt, chunk.deliverAt - t);
          break;
        }
        this.dequeue();
        this.host.delivered(this.name, chunk.data.length);
        if (!dest.write(chunk.data)) {
          this.waitingDrain = true;
          break;
        }
      }
      if (this.pending === 0 && this.sourceEnded && !this.finSent) {
        this.finSent = true;
        dest.end(() => this.conn.finPassed(this.name));
      }
    }
    this.updateFlow();
  }

  onDrain(): void {
    this.waitingDrain = false;
    this.pump();
  }

  /** Entering a blackhole: stop the clock, keep reading (and holding) from the source. */
  hold(): void {
    this.clearTimer();
    this.updateFlow();
  }

  /** Leaving a blackhole or changing latency: reschedule what is queued, from its arrival time. */
  reschedule(): void {
    this.clearTimer();
    let previous = Number.NEGATIVE_INFINITY;
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i]!;
      chunk.deliverAt = Math.max(previous, chunk.at + this.delay());
      previous = chunk.deliverAt;
    }
  }

  /** The destination closed: drop what is queued and let the source drain into nothing. */
  discard(): void {
    this.discarding = true;
    this.clearTimer();
    this.chunks = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.updateFlow();
  }

  dispose(): void {
    this.clearTimer();
    this.chunks = [];
    this.head = 0;
    this.queuedBytes = 0;
  }

  private delay(): number {
    const mode = this.host.mode();
    if (mode.kind !== 'latency') return 0;
    const [base, jitter] = this.name === 'up' ? [mode.upMs, mode.upJitterMs] : [mode.downMs, mode.downJitterMs];
    return jitter > 0 ? base + this.host.random() * jitter : base;
  }

  private enqueue(chunk: Chunk): void {
    this.chunks.push(chunk);
    this.queuedBytes += chunk.data.length;
  }

  private dequeue(): void {
    const chunk = this.chunks[this.head]!;
    this.queuedBytes -= chunk.data.length;
    this.head++;
    if (this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  private arm(at: number, inMs: number): void {
    if (this.timer !== null && this.timerAt === at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(1, Math.ceil(inMs)),
    );
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Backpressure: pause the source while the destination is full or the queue is at its bound. */
  private updateFlow(): void {
    const source = this.conn.sourceOf(this.name);
    if (source === null || source.destroyed) return;
    const pause =
      !this.discarding && this.host.mode().kind !== 'blackhole' && (this.waitingDrain || this.queuedBytes >= this.host.maxBufferBytes);
    if (pause && !source.isPaused()) source.pause();
    else if (!pause && source.isPaused()) source.resume();
  }
}
