/**
 * A "sticky" TCP proxy for tests, behaving like twemproxy-style middleboxes: when its upstream
 * socket closes or errors while the client's connection is idle (every command sent upstream has
 * had its whole reply), it keeps the client socket open, and on the client's next bytes it dials
 * the target again (holding those bytes until connected) and goes on forwarding over the same
 * client socket. A client behind it never sees a redis-server restart as a closed connection, so
 * tests can prove that such a restart is still detected by other means (e.g. INFO run_id).
 *
 * Like a real proxy it never lets a later server's replies answer earlier commands: when the
 * upstream goes away with a request in flight (bytes sent upstream without their full reply, a
 * half-sent command, a half-received reply) it closes the client socket instead of redialling.
 * So does it when it cannot pair requests with replies (pub/sub, MONITOR, CLIENT REPLY, RESP3,
 * bytes it cannot parse): such a connection is never moved to another upstream.
 *
 * This is the opposite of lib/faults' FaultProxy, which never gives a client connection a second
 * upstream. Tests only; real sockets, no mocks.
 */
import { connect, createServer, type Socket } from 'node:net';
import { respValueEnd } from '../../chaos/harness/resp';

export interface StickyProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Upstream connections dialled since start, all clients together (every redial counts). */
  readonly upstreamConnections: number;
  /** Client connections the proxy closed because their upstream went away with a request in flight. */
  readonly closedInFlight: number;
  /** Stops listening and destroys every socket; idempotent. */
  close(): Promise<void>;
}

/** How long to wait before dialling again when a dial fails while client bytes are waiting. */
const REDIAL_DELAY_MS = 50;

/** The end of the RESP value starting at `at`, or -1 when `buf` does not hold all of it yet. */
type Scan = (buf: Buffer, at: number) => number;

/** A RESP2 reply; RESP3 types and bad lengths throw (the proxy cannot pair pushes with requests). */
const scanReply: Scan = respValueEnd;

/** Commands after which replies no longer pair one-to-one with requests. */
const UNPAIRABLE_COMMANDS = new Set(['subscribe', 'psubscribe', 'ssubscribe', 'monitor', 'hello', 'reset']);

/**
 * Counts the complete RESP values of one direction of a connection, fed in order, chunk by chunk.
 * `partial` is true while a value has begun and not ended.
 */
class RespCounter {
  count = 0;
  private rest: Buffer = Buffer.alloc(0);
  constructor(
    private readonly scan: Scan,
    private readonly onValue?: (buf: Buffer, at: number, end: number) => void,
  ) {}

  get partial(): boolean {
    return this.rest.length > 0;
  }

  feed(chunk: Buffer): void {
    const buf = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let at = 0;
    while (at < buf.length) {
      const end = this.scan(buf, at);
      if (end < 0) break;
      this.onValue?.(buf, at, end);
      this.count++;
      at = end;
    }
    this.rest = at === buf.length ? Buffer.alloc(0) : buf.subarray(at);
  }
}

/** A request: a RESP array of bulk strings (what clients send), or an inline command line. */
const scanRequest: Scan = (buf, at) => {
  if (buf[at] === 0x2a /* '*' */) return scanReply(buf, at);
  const lf = buf.indexOf(0x0a, at);
  return lf < 0 ? -1 : lf + 1;
};

/** The command name of a request (lower case), or '' when it has none. */
function commandOf(buf: Buffer, at: number, end: number): string {
  if (buf[at] !== 0x2a) return buf.toString('latin1', at, end).trim().split(/\s+/)[0]!.toLowerCase();
  const first = buf.indexOf(0x0d, at) + 2;
  if (buf[first] !== 0x24 /* '$' */) return '';
  const cr = buf.indexOf(0x0d, first);
  const len = Number(buf.toString('latin1', first + 1, cr));
  return buf.toString('latin1', cr + 2, cr + 2 + len).toLowerCase();
}

/** Whether a request is CLIENT REPLY …, which makes the server skip replies. */
function isClientReply(buf: Buffer, at: number, end: number): boolean {
  return commandOf(buf, at, end) === 'client' && /\r\nreply\r\n/i.test(buf.toString('latin1', at, end));
}

export async function startStickyProxy(targetPort: number): Promise<StickyProxy> {
  let dialled = 0;
  let closedInFlight = 0;
  let closing = false;
  const live = new Set<{ client: Socket; drop(): void }>();

  const server = createServer((client) => {
    let upstream: Socket | null = null;
    let connected = false;
    const pending: Buffer[] = [];
    let redialTimer: NodeJS.Timeout | null = null;
    // What went to the current upstream and what came back, to tell an idle connection (safe to
    // move to a new upstream) from one with a request in flight.
    let unpairable = false;
    const markUnpairable = (): void => {
      unpairable = true;
    };
    const requestCounter = () =>
      new RespCounter(scanRequest, (buf, at, end) => {
        if (UNPAIRABLE_COMMANDS.has(commandOf(buf, at, end)) || isClientReply(buf, at, end)) markUnpairable();
      });
    let requests = requestCounter();
    let replies = new RespCounter(scanReply);
    const feed = (counter: RespCounter, data: Buffer): void => {
      if (unpairable) return;
      try {
        counter.feed(data);
      } catch {
        markUnpairable();
      }
    };
    const idle = (): boolean => !unpairable && !requests.partial && !replies.partial && requests.count === replies.count;
    const sendUp = (socket: Socket, data: Buffer): void => {
      feed(requests, data);
      socket.write(data);
    };

    const forget = (socket: Socket): void => {
      if (upstream !== socket) return;
      upstream = null;
      connected = false;
      socket.destroy();
      if (!idle()) {
        // A request in flight: its reply will never come, and a new upstream's replies must not
        // answer it. A real proxy closes the client (or answers an error): close it.
        closedInFlight++;
        entry.drop();
        return;
      }
      requests = requestCounter();
      replies = new RespCounter(scanReply);
      // Bytes that were waiting for this dial need another one; otherwise wait for the client.
      if (pending.length > 0 && !client.destroyed && redialTimer === null) {
        redialTimer = setTimeout(() => {
          redialTimer = null;
          dial();
        }, REDIAL_DELAY_MS);
      }
    };

    const dial = (): void => {
      if (upstream !== null || closing || client.destroyed) return;
      dialled++;
      const socket = connect({ host: '127.0.0.1', port: targetPort });
      upstream = socket;
      socket.setNoDelay(true);
      socket.on('connect', () => {
        if (upstream !== socket) return;
        connected = true;
        for (const chunk of pending.splice(0)) sendUp(socket, chunk);
      });
      socket.on('data', (data: Buffer) => {
        if (upstream !== socket) return;
        feed(replies, data);
        if (!client.destroyed) client.write(data);
      });
      // The server closing its side (FIN) ends this upstream too: the next bytes get a new one.
      socket.on('end', () => forget(socket));
      socket.on('error', () => forget(socket));
      socket.on('close', () => forget(socket));
    };

    const entry = {
      client,
      drop: () => {
        if (redialTimer !== null) clearTimeout(redialTimer);
        redialTimer = null;
        pending.length = 0;
        const u = upstream;
        upstream = null;
        u?.destroy();
        client.destroy();
      },
    };
    live.add(entry);

    client.setNoDelay(true);
    client.on('data', (data: Buffer) => {
      if (upstream !== null && connected) {
        sendUp(upstream, data);
        return;
      }
      pending.push(data);
      dial();
    });
    client.on('error', () => undefined);
    client.on('close', () => {
      live.delete(entry);
      entry.drop();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('sticky proxy: no listen address');

  let closed: Promise<void> | null = null;
  return {
    port: address.port,
    get upstreamConnections() {
      return dialled;
    },
    get closedInFlight() {
      return closedInFlight;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        for (const entry of [...live]) entry.drop();
        live.clear();
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
