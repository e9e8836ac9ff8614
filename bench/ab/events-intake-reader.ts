/**
 * The reading end of bench/ab/events-intake.ts, in a process of its own so its CPU is its own:
 * subscribes on each node URL to the given keyevent channels with the lock core's connection (as
 * lib/server/events/keyspace-source.ts does) and counts the messages on lock keys. Protocol, one
 * line each way: "ready" (or "error <why>") once subscribed; "mark" starts a measurement, answered
 * "marked"; "report" answers {cpuUs, messages}.
 */
import { createInterface } from 'node:readline';
import { NodeConnection, parseNodeUrl } from '@redlock-console/redlock/internals';

const [urlsArg = '', eventsArg = '', prefix = ''] = process.argv.slice(2);
const urls = urlsArg.split(',');
const channels = eventsArg.split(',').map((event) => `__keyevent@0__:${event}`);
const say = (line: string) => process.stdout.write(`${line}\n`);
let messages = 0;
let subscribed = 0;

const connections = urls.map((url) => {
  const connection = new NodeConnection(parseNodeUrl(url));
  connection.on('error', () => undefined);
  connection.on('push', (reply: unknown) => {
    if (Array.isArray(reply) && reply[0] === 'message' && String(reply[2]).startsWith(prefix)) messages++;
  });
  connection.once('ready', () => {
    connection.call('SUBSCRIBE', ...channels).then(
      () => {
        if (++subscribed === urls.length) say('ready');
      },
      (err: Error) => {
        say(`error ${err.message}`);
        process.exit(1);
      },
    );
  });
  return connection;
});
setTimeout(() => {
  if (subscribed < urls.length) {
    say(`error subscribed on ${subscribed} of ${urls.length} nodes within 5 s`);
    process.exit(1);
  }
}, 5_000).unref();

let mark = process.cpuUsage();
createInterface({ input: process.stdin })
  .on('line', (line) => {
    if (line === 'mark') {
      mark = process.cpuUsage();
      messages = 0;
      say('marked');
    } else if (line === 'report') {
      const used = process.cpuUsage(mark);
      say(JSON.stringify({ cpuUs: used.user + used.system, messages }));
    }
  })
  .on('close', () => {
    for (const connection of connections) connection.disconnect();
    process.exit(0);
  });
