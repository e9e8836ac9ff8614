/**
 * The fenced register of the chaos harness: a separate process on 127.0.0.1 (see
 * chaos/harness/register-protocol.ts) that accepts a write to an `f:` resource only if its fence is ≥
 * the highest it has accepted there, accepts every write to a `u:` resource, and records every
 * decision with its CLOCK_MONOTONIC time. Started by the runner with an IPC channel; exits when
 * the runner goes away.
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { isFencedResource, nowNs, type RegisterRecord } from '../harness/history';
import { decideWrite, parseWrite } from '../harness/register-protocol';
import type { RegisterToRunner, RunnerToRegister } from '../harness/worker-protocol';

const origin = BigInt(process.argv[2] ?? '0');
let records: RegisterRecord[] = [];
let highest = new Map<string, number>();
const sockets = new Set<Socket>();

function send(msg: RegisterToRunner): void {
  process.send?.(msg);
}

const server = createServer((socket) => {
  sockets.add(socket);
  socket.setNoDelay(true);
  socket.setEncoding('utf8');
  let buffer = '';
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let out = '';
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const req = parseWrite(line);
      if (!req) {
        out += 'E bad request\n';
        continue;
      }
      const fenced = isFencedResource(req.resource);
      const top = highest.get(req.resource);
      const accepted = decideWrite(fenced, req.fence, top);
      if (accepted && fenced && req.fence !== null && (top === undefined || req.fence > top)) highest.set(req.resource, req.fence);
      records.push({ resource: req.resource, lock: req.lock, fence: req.fence, t: nowNs(origin), accepted });
      out += accepted ? 'A\n' : `R ${top ?? '-'}\n`;
    }
    if (out) socket.write(out);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => sockets.delete(socket));
});

process.on('message', (msg: RunnerToRegister) => {
  if (msg.type === 'reset') {
    records = [];
    highest = new Map();
  } else if (msg.type === 'dump') {
    writeFileSync(msg.path, records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
    send({ type: 'dumped', count: records.length });
  }
});
// The runner is gone (normal end or crash): leave with it.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  send({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
});
