/**
 * A "sticky" TCP proxy for tests, behaving like twemproxy-style middleboxes: when its upstream
 * socket closes or errors it keeps the client socket open, and on the client's next bytes it dials
 * the target again (holding those bytes until connected) and goes on forwarding over the same
 * client socket. A client behind it never sees a redis-server restart as a closed connection, so
 * tests can prove that such a restart is still detected by other means (e.g. INFO run_id).
 *
 * This is the opposite of lib/faults' FaultProxy, which never gives a client connection a second
 * upstream. Tests only; real sockets, no mocks.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface StickyProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Upstream connections dialled since start, all clients together (every redial counts). */
  readonly upstreamConnections: number;
  /** Stops listening and destroys every socket; idempotent. */
  close(): Promise<void>;
}

/** How long to wait before dialling again when a dial fails while client bytes are waiting. */
const REDIAL_DELAY_MS = 50;

export async function startStickyProxy(targetPort: number): Promise<StickyProxy> {
  let dialled = 0;
  let closing = false;
  const live = new Set<{ client: Socket; drop(): void }>();

  const server = createServer((client) => {
    let upstream: Socket | null = null;
    let connected = false;
    const pending: Buffer[] = [];
    let redialTimer: NodeJS.Timeout | null = null;

    const forget = (socket: Socket): void => {
      if (upstream !== socket) return;
      upstream = null;
      connected = false;
      socket.destroy();
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
        for (const chunk of pending.splice(0)) socket.write(chunk);
      });
      socket.on('data', (data: Buffer) => {
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
        upstream?.destroy();
        upstream = null;
        client.destroy();
      },
    };
    live.add(entry);

    client.setNoDelay(true);
    client.on('data', (data: Buffer) => {
      if (upstream !== null && connected) {
        upstream.write(data);
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
