/**
 * An anonymous socket flood, in a process of its own (the attacker's CPU and file descriptors are
 * not the server's; on this host they still share its two cores): the "thousands of
 * keep-alive connections each sending an unauthenticated `POST /api/locks {}` every 30 s".
 *
 *   node test/support/socket-flood.mjs '{"port":1234,"sources":["127.0.0.2"],"perSource":100,
 *     "intervalMs":10000,"rampMs":3000,"idleShare":0.4}'
 *
 * Each slot holds one connection from its source address: it connects at a random moment of the
 * ramp, then every `intervalMs` sends its request (an idle slot sends nothing, it only holds the
 * socket); a slot whose connection was closed connects again at its next tick, as a holding script
 * does. Every 200 ms it prints one JSON line of counters (see `stats`); SIGTERM stops it. A line
 * `pause` on its stdin stops it from connecting or sending (the ticks that come meanwhile are
 * skipped, not made up later: no burst at `resume`); the sockets it holds stay open.
 */
import { createInterface } from 'node:readline';
import { connect } from 'node:net';

const options = JSON.parse(process.argv[2] ?? '{}');
const { port, sources, perSource, intervalMs, rampMs, idleShare } = options;
const REQUEST = 'POST /api/locks HTTP/1.1\r\nHost: console.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';

const stats = {
  /** Connections open now (connected, not yet closed), in all and per source address. */
  open: 0,
  openBySource: Object.fromEntries(sources.map((s) => [s, 0])),
  /** The most open at once, in all and from any one source. */
  maxOpen: 0,
  maxOpenBySource: 0,
  connects: 0,
  /** Connect attempts that failed (no descriptor, refused by the kernel…). */
  connectErrors: 0,
  requests: 0,
  answers401: 0,
  otherAnswers: 0,
  /** Connections the server closed before it answered anything on them (refused, evicted, idle). */
  closedUnanswered: 0,
  /** Connections closed after a 401, and the longest time from the 401 to the close (ms). */
  closedAfter401: 0,
  slowestCloseAfter401Ms: 0,
  /** Connections still open 2 s after a 401 on them. */
  openLongAfter401: 0,
  /** This process's CPU time so far (ms). */
  cpuMs: 0,
};

function slot(source, idle) {
  let socket = null;
  let connected = false;
  let answeredAt = 0;
  let answered = false;
  let lingerCounted = false;

  const open = () => {
    const s = connect({ host: '127.0.0.1', port, localAddress: source });
    socket = s;
    connected = false;
    answered = false;
    answeredAt = 0;
    lingerCounted = false;
    stats.connects++;
    s.setNoDelay(true);
    s.on('connect', () => {
      connected = true;
      stats.open++;
      stats.openBySource[source]++;
      stats.maxOpen = Math.max(stats.maxOpen, stats.open);
      stats.maxOpenBySource = Math.max(stats.maxOpenBySource, stats.openBySource[source]);
      if (!idle) send();
    });
    s.on('data', (chunk) => {
      const text = chunk.toString('latin1');
      for (const m of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) {
        if (m[1] === '401') stats.answers401++;
        else stats.otherAnswers++;
        answered = true;
        answeredAt = Date.now();
      }
    });
    s.on('error', () => {
      if (!connected) stats.connectErrors++;
    });
    s.on('close', () => {
      if (socket === s) socket = null;
      if (!connected) return;
      stats.open--;
      stats.openBySource[source]--;
      if (!answered) stats.closedUnanswered++;
      else if (answeredAt) {
        stats.closedAfter401++;
        stats.slowestCloseAfter401Ms = Math.max(stats.slowestCloseAfter401Ms, Date.now() - answeredAt);
      }
    });
  };

  const send = () => {
    if (!socket || !connected || socket.destroyed) return;
    stats.requests++;
    socket.write(REQUEST);
  };

  const tick = () => {
    if (paused) return;
    if (!socket) open();
    else if (!idle) {
      if (answeredAt && !lingerCounted && Date.now() - answeredAt > 2_000) {
        lingerCounted = true;
        stats.openLongAfter401++;
      }
      send();
    }
  };
  setTimeout(() => {
    tick();
    setInterval(tick, intervalMs);
  }, Math.random() * rampMs);
}

for (const source of sources) for (let i = 0; i < perSource; i++) slot(source, i < perSource * idleShare);

let paused = false;
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'pause') paused = true;
  if (line === 'resume') paused = false;
});

const report = () => {
  const cpu = process.cpuUsage();
  stats.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  process.stdout.write(`${JSON.stringify(stats)}\n`);
};
setInterval(report, 200);
process.on('SIGTERM', () => {
  report();
  process.exit(0);
});
