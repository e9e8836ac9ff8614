import { InvalidArgumentError } from './errors';

/** Where and how the lock core connects to a node given as a URL. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
  /** rediss:// — TLS, verified against the system's CAs (and NODE_EXTRA_CA_CERTS). */
  readonly tls: boolean;
  readonly username: string | null;
  readonly password: string | null;
  readonly db: number;
}

/**
 * Parse `redis[s]://[[user]:password@]host[:port][/db]`. Anything else (query parameters, a
 * non-numeric database, another scheme) is refused with InvalidArgumentError before any connection
 * is opened: an option the core would silently ignore is a misconfiguration.
 */
export function parseNodeUrl(target: string): NodeAddress {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new InvalidArgumentError('nodes', 'each node must be a redis:// or rediss:// URL or an ioredis client');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new InvalidArgumentError('nodes', `each node URL must start with redis:// or rediss://, got ${url.protocol}//`);
  }
  if (url.search !== '' || url.hash !== '') {
    throw new InvalidArgumentError(
      'nodes',
      'a node URL takes no query or fragment (redis[s]://[[user]:password@]host[:port][/db]); ' +
        'for other connection options pass an ioredis client',
    );
  }
  const path = url.pathname.replace(/^\/+/, '');
  if (path !== '' && !/^(?:[0-9]|1[0-5])$/.test(path)) {
    throw new InvalidArgumentError('nodes', `a node URL's path is its database number (0-15), got /${path}`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return {
    host,
    port: url.port ? Number(url.port) : 6379,
    tls: url.protocol === 'rediss:',
    username: url.username ? decodeURIComponent(url.username) : null,
    password: url.password ? decodeURIComponent(url.password) : null,
    db: path === '' ? 0 : Number(path),
  };
}
