/**
 * The reading end of bench/ab/events-intake.ts, in a process of its own so its CPU is its own:
 * subscribes on each node URL to the given keyevent channels with the lock core's connection (as
 * lib/server/events/keyspace-source.ts does) and counts the messages on lock keys. With READ_MS > 0
 * each socket is paused and read every READ_MS ms. Protocol on stdin/stdout, one line each:
 * "ready" once subscribed; "mark" starts a measurement; any other line answers {cpuUs, messages}.
 */
import type { Socket } from 'node:net';
import { NodeConnection, parseNodeUrl } from '@redlock-console/redlock/internals';

const [urlsArg = '', eventsArg = '', prefix = ''] = process.argv.slice(2);
const urls = urlsArg.split(',');
const channels = eventsArg.split(',').map((event) => `__keyevent@0__:${event}`);
const readMs = Number(process.env.READ_MS ?? 0);
let messages = 0;
let subscribed = 0;
const connections = urls.map((url) => {
  const connection = new NodeConnection(parseNodeUrl(url));
  connection.on('error', () => undefined);
  connection.on('push', (reply: unknown) => {
    if (Array.isArray(reply) && reply[0] === 'message' && String(reply[2]).startsWith(prefix)) messages++;
  });
  connection.once('ready', () => {
    void connection.call('SUBSCRIBE', ...channels).then(() => {
      if (readMs > 0) {
        const socket = (connection as unknown as { socket: Socket }).socket;
        socket.pause();
        setInterval(() => {
          socket.resume();
          setImmediate(() => socket.pause());
        }, readMs);
      }
      if (++subscribed === urls.length) process.stdout.write('ready\n');
    });
  });
  return connection;
});

let mark = process.cpuUsage();
process.stdin.setEncoding('utf8');
process.stdin.on('data', (line: string) => {
  if (line.trim() === 'mark') {
    mark = process.cpuUsage();
    messages = 0;
    return;
  }
  const used = process.cpuUsage(mark);
  process.stdout.write(`${JSON.stringify({ cpuUs: used.user + used.system, messages })}\n`);
});
process.stdin.on('end', () => {
  for (const connection of connections) connection.disconnect();
  process.exit(0);
});
