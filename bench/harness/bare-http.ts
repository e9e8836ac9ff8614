import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { sleep } from './util';

/**
 * Node's bare-HTTP floor: a node:http server in a process of its own that reads each request's
 * body and answers one fixed JSON body, whatever was asked (no routing, no auth, no lock). A pair
 * against it is the same two requests a lock-service pair makes, with the same client: its server
 * CPU per pair is what Node's HTTP alone costs for two requests, the floor the lock service's CPU
 * per pair is compared with in the same run. The answer carries what the bench's checks look for
 * in both answers of a pair (a token, released: true), at about the size of the service's.
 */
export const FLOOR_BODY = JSON.stringify({
  resource: 'bare-floor',
  token: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  fence: '1',
  ttlMs: 10_000,
  validityMs: 9_990,
  released: true,
});

const SERVER = `
const http = require('node:http');
const body = Buffer.from(${JSON.stringify(FLOOR_BODY)});
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
process.on('SIGTERM', () => process.exit(0));
`;

export interface BareHttpServer {
  child: ChildProcess;
  base: string;
}

export async function startBareHttp(): Promise<BareHttpServer> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await Promise.race([
    new Promise<number>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        if (text.includes('\n')) resolve(Number(text.trim()));
      });
      child.once('exit', (code) => reject(new Error(`the bare HTTP server exited (${code}) before it listened`)));
    }),
    sleep(20_000).then(() => {
      throw new Error('the bare HTTP server did not listen within 20 s');
    }),
  ]);
  return { child, base: `http://127.0.0.1:${port}` };
}

export async function stopBareHttp(s: BareHttpServer): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = once(s.child, 'exit');
  s.child.kill('SIGTERM');
  await Promise.race([exited, sleep(5_000)]);
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
}
