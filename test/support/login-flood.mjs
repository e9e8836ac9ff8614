/**
 * A login flood, in a process of its own (the attacker's CPU is not the server's nor the measuring
 * client's; on this host they still share its two cores): the "failed logins with a new
 * username each time", sent at a fixed rate whatever the console answers (an attacker does not
 * slow down when the console does).
 *
 *   node test/support/login-flood.mjs '{"port":1234,"sources":["127.0.0.31"],"perSecond":100,"ms":8000,"tag":"x"}'
 *
 * `POST /api/auth/login {"username":"flood-<tag>-<i>","password":…}` from `sources` in turn (each
 * source address with keep-alive connections of its own; a refused login closes its connection,
 * so most requests open one), for `ms`. When every request has been answered (or has failed), it
 * prints one JSON line — { sent, statuses: { "<status>": count } (0: no answer), cpuMs } — and exits.
 */
import { Agent, request } from 'node:http';

const { port, sources, perSecond, ms, tag } = JSON.parse(process.argv[2] ?? '{}');
const agents = sources.map(() => new Agent({ keepAlive: true, maxSockets: 64 }));
const statuses = {};
const count = (status) => (statuses[status] = (statuses[status] ?? 0) + 1);

function login(i) {
  const a = i % sources.length;
  const body = JSON.stringify({ username: `flood-${tag}-${i}`, password: 'guess-guess-guess' });
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/auth/login',
        method: 'POST',
        agent: agents[a],
        localAddress: sources[a],
        timeout: 60_000,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(count(res.statusCode ?? 0)));
        res.on('error', () => resolve(count(0)));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(count(0)));
    req.end(body);
  });
}

const sleep = (delay) => new Promise((done) => setTimeout(done, delay));
const sent = [];
const started = Date.now();
// Every login due by now is sent now: a process the scheduler kept waiting catches up at once.
for (let i = 0; Date.now() - started < ms;) {
  const due = Math.min(Math.floor(((Date.now() - started) * perSecond) / 1000) + 1, Math.ceil((ms * perSecond) / 1000));
  while (i < due) sent.push(login(i++));
  await sleep(Math.max(1, started + (i * 1000) / perSecond - Date.now()));
}
await Promise.all(sent);
agents.forEach((agent) => agent.destroy());
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ sent: sent.length, statuses, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
