import type { Redis } from 'ioredis';
import { parseNodeUrl } from './node-url';

/**
 * How a node is named in votes, events and errors: `host:port` (or a socket path, or
 * `sentinel:<master name>`), never credentials. Two nodes with one label are refused (redlock.ts).
 */
export function nodeLabel(target: string | Redis): string {
  if (typeof target === 'string') {
    const { host, port } = parseNodeUrl(target);
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }
  const options = target.options;
  if (options.path) return options.path;
  // A Sentinel-managed client: its master's name (its host option is a placeholder).
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0 && options.name) return `sentinel:${options.name}`;
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
}
