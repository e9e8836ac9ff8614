import type { Redis } from 'ioredis';
import { InvalidArgumentError } from './errors';

/**
 * How a node is named in votes, events and errors: `host:port` (or a socket path, or
 * `sentinel:<master name>`), never credentials. Two nodes with one label are refused (redlock.ts).
 */
export function nodeLabel(target: string | Redis): string {
  if (typeof target === 'string') {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new InvalidArgumentError('nodes', 'each node must be a redis:// or rediss:// URL or an ioredis client');
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      throw new InvalidArgumentError('nodes', `each node URL must start with redis:// or rediss://, got ${url.protocol}//`);
    }
    return `${url.hostname || '127.0.0.1'}:${url.port || '6379'}`;
  }
  const options = target.options;
  if (options.path) return options.path;
  // A Sentinel-managed client: its master's name (its host option is a placeholder).
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0 && options.name) return `sentinel:${options.name}`;
  return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
}

