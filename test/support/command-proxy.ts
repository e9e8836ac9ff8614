import { connect, createServer, type Server, type Socket } from 'node:net';
import { respValueEnd } from '../../chaos/harness/resp';

/**
 * A command-level proxy for tests (as Envoy's or twemproxy's Redis proxies are): it parses the
 * client's RESP commands and forwards them to its upstream one at a time, keeping the client's
 * socket when the upstream changes. arm() makes the next SCRIPT EXISTS the last command the
 * current upstream (p1) answers on that connection: the next command goes to p2, as after a
 * restart of the upstream between two commands of one batch.
 */
export function commandProxy(p1: number, p2: number): { server: Server; port: () => number; arm: () => void; switched: () => number } {
  let armed = false;
  let switched = 0;
  const server = createServer((client: Socket) => {
    // As real proxies do: without it, Nagle holds a reply written right after another until the
    // client's delayed ACK (tens of ms), which the tests would take for a slow node.
    client.setNoDelay(true);
    let target = p1;
    let up: Socket | null = null;
    let cbuf = Buffer.alloc(0);
    let ubuf = Buffer.alloc(0);
    const queue: Buffer[] = [];
    let inflight: Buffer | null = null;
    const dial = () => {
      const s = connect(target, '127.0.0.1');
      s.setNoDelay(true);
      s.on('data', (d) => {
        ubuf = Buffer.concat([ubuf, d]);
        for (;;) {
          if (!inflight) return;
          const end = respValueEnd(ubuf, 0);
          if (end < 0) return;
          client.write(ubuf.subarray(0, end));
          ubuf = ubuf.subarray(end);
          const cmd = inflight;
          inflight = null;
          if (armed && /\r\nSCRIPT\r\n\$6\r\nEXISTS\r\n/i.test(cmd.toString('latin1'))) {
            armed = false;
            switched++;
            // "restart": this upstream is gone, the next command goes to the new process
            s.removeAllListeners('data');
            s.destroy();
            up = null;
            target = p2;
          }
          pump();
        }
      });
      s.on('error', () => client.destroy());
      return s;
    };
    const pump = () => {
      if (inflight || queue.length === 0) return;
      inflight = queue.shift()!;
      up ??= dial();
      up.write(inflight);
    };
    client.on('data', (d) => {
      cbuf = Buffer.concat([cbuf, d]);
      for (;;) {
        const end = respValueEnd(cbuf, 0);
        if (end < 0) break;
        queue.push(Buffer.from(cbuf.subarray(0, end)));
        cbuf = cbuf.subarray(end);
      }
      pump();
    });
    client.on('error', () => up?.destroy());
    client.on('close', () => up?.destroy());
  });
  server.listen(0, '127.0.0.1');
  return { server, port: () => (server.address() as { port: number }).port, arm: () => (armed = true), switched: () => switched };
}
