import { toRedlockClient, type RedlockNodeTarget } from './client-detect';
import { parseNodeUrl } from './node-url';

/**
 * How a node is named in votes, events and errors: `host:port` (or a socket path, or
 * `sentinel:<master name>`), never credentials. Two nodes with one label are refused (redlock.ts).
 * A client passed in is named by its adapter (client.ts).
 */
export function nodeLabel(target: RedlockNodeTarget): string {
  if (typeof target === 'string') {
    const { host, port } = parseNodeUrl(target);
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }
  const client = toRedlockClient(target);
  if (!client) throw new TypeError('not a Redis client the lock core supports');
  return client.label;
}
