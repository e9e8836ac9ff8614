import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY } from '../support/api';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';
import { serviceEnv, startLockServiceProcess, tempDataDir, type LockServiceProcess } from '../support/lock-service-process';

/**
 * REDLOCK_LEAN_HTTP=off (the bench's A/B of the lean reader, a diagnostic): the lock-service
 * process then lets Node's own parser read every request, and answers exactly as with the lean
 * reader in front. Which reader wrote an answer shows in its head: the lean reader writes
 * Content-Length after Date and Keep-Alive, Node's ServerResponse writes it before Date.
 */
interface RawAnswer {
  status: number;
  /** Header names in the order they were written, lower case. */
  order: string[];
  headers: Record<string, string>;
  body: string;
}

/** One request on a connection of its own, written byte for byte; the answer read off the socket. */
function raw(port: number, method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawAnswer> {
  const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== '') head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${head.join('\r\n')}\r\n\r\n${body}`));
    let text = '';
    const done = () => {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const lines = text.slice(0, end).split('\r\n');
      const pairs = lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const);
      const fields = Object.fromEntries(pairs);
      const rest = text.slice(end + 4);
      if (Buffer.byteLength(rest) < Number(fields['content-length'] ?? 0)) return false;
      socket.destroy();
      resolve({ status: Number(lines[0]!.split(' ')[1]), order: pairs.map(([k]) => k), headers: fields, body: rest });
      return true;
    };
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => void ((text += d), done()));
    socket.on('end', () => done() || reject(new Error(`closed before a whole answer: ${JSON.stringify(text)}`)));
    socket.on('error', reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error('no answer in 20 s')));
  });
}

const auth = { Authorization: `Bearer ${API_KEY}` };

/** What a client can rely on in an answer: status, content type, Connection, the error code, the body's keys. */
function shape(a: RawAnswer): Record<string, unknown> {
  const json = JSON.parse(a.body || '{}') as Record<string, unknown>;
  const error = json.error as { code?: string } | undefined;
  return {
    status: a.status,
    type: a.headers['content-type'],
    connection: a.headers.connection,
    cache: a.headers['cache-control'],
    code: error?.code,
    keys: Object.keys(json).sort(),
  };
}

/** The same walk on one service: acquire, contended, extend, release, and the refusals. */
async function walk(service: LockServiceProcess, resource: string): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  const post = async (path: string, body: unknown, headers: Record<string, string> = auth) => {
    const a = await raw(service.port, 'POST', path, headers, JSON.stringify(body));
    answers.push(a);
    return a;
  };
  const granted = await post('/api/locks', { resource, ttlMs: 4_000 });
  const { token } = JSON.parse(granted.body) as { token: string };
  await post('/api/locks', { resource, ttlMs: 4_000 });
  await post(`/api/locks/${resource}/extend`, { token, ttlMs: 4_000 });
  await post(`/api/locks/${resource}/release`, { token });
  await post(`/api/locks/${resource}/release`, { token });
  await post('/api/locks', { resource, ttlMs: 4_000 }, {});
  await post('/api/locks', { resource, ttlMs: -1 });
  answers.push(await raw(service.port, 'POST', '/api/locks', auth, '{"resource":'));
  answers.push(await raw(service.port, 'GET', '/api/nodes', auth));
  answers.push(await raw(service.port, 'GET', '/api/health', {}));
  return answers;
}

describe('the lock-service process with REDLOCK_LEAN_HTTP=off', () => {
  let cluster: TestCluster;
  let data: ReturnType<typeof tempDataDir>;
  let env: Record<string, string>;
  let lean: LockServiceProcess;
  let plain: LockServiceProcess;

  beforeAll(async () => {
    const keyPrefix = uniquePrefix('lean');
    cluster = await startTestCluster({ nodes: 3, maxTtlMs: 5_000, keyPrefix });
    data = tempDataDir();
    env = { ...serviceEnv(cluster, data.dir, 5_000), REDLOCK_KEY_PREFIX: keyPrefix };
    [lean, plain] = await Promise.all([startLockServiceProcess(env), startLockServiceProcess({ ...env, REDLOCK_LEAN_HTTP: 'off' })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([lean?.kill(), plain?.kill()]);
    await cluster?.stop();
    data?.remove();
  });

  it("answers every request as the lean reader does, with Node's parser reading them", async () => {
    const withLean = await walk(lean, 'switch-on');
    const withNode = await walk(plain, 'switch-off');
    expect(withNode.map(shape)).toEqual(withLean.map(shape));
    expect(withLean.map((a) => a.status)).toEqual([200, 409, 200, 200, 200, 401, 400, 400, 404, 200]);
    expect(JSON.parse(withNode[3]!.body)).toMatchObject({ released: true });
    expect(JSON.parse(withNode[4]!.body)).toMatchObject({ released: false });
    // Which reader answered the plain acquire: the lean one writes Content-Length last, Node before Date.
    const before = (a: RawAnswer) => a.order.indexOf('content-length') < a.order.indexOf('date');
    expect(before(withLean[0]!)).toBe(false);
    expect(withNode.every(before)).toBe(true);
  }, 60_000);

  it('refuses to start on a value that is neither on nor off', async () => {
    const started = startLockServiceProcess({ ...env, REDLOCK_LEAN_HTTP: 'maybe' });
    // One that started anyway is stopped here, not left running after the test.
    void started.then(
      (p) => p.kill(),
      () => undefined,
    );
    await expect(started).rejects.toThrow(/REDLOCK_LEAN_HTTP takes on or off; got "maybe"/);
  }, 90_000);
});
