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
  /**
   * `?proxy=twemproxy`: the node is reached through twemproxy (nutcracker), so the connection is
   * proxy-safe from the start (connection.ts proxySafe) and skips the handshake step that finds
   * it out. Absent: found by that step.
   */
  readonly proxy?: 'twemproxy';
}

/** The query parameter a node URL may carry, and its values. */
const PROXIES = ['twemproxy'] as const;

/**
 * Parse `redis[s]://[[user]:password@]host[:port][/db][?proxy=twemproxy]`. Anything else (other
 * query parameters, a non-numeric database, another scheme) is refused with InvalidArgumentError
 * before any connection is opened: an option the core would silently ignore is a misconfiguration.
 * So is what twemproxy cannot serve with `?proxy=twemproxy`: an ACL user (`AUTH user password`;
 * the password is the proxy's own `redis_auth`) and a database other than 0 (SELECT): it closes
 * the connection on either.
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
  const names = [...url.searchParams.keys()];
  if (url.hash !== '' || names.some((name) => name !== 'proxy') || names.length > 1) {
    throw new InvalidArgumentError(
      'nodes',
      'a node URL takes no query or fragment, but for ?proxy=twemproxy (redis[s]://[[user]:password@]host[:port][/db][?proxy=twemproxy]); ' +
        'for other connection options pass an ioredis client',
    );
  }
  const proxy = url.searchParams.get('proxy');
  if (proxy !== null && !(PROXIES as readonly string[]).includes(proxy)) {
    throw new InvalidArgumentError(
      'nodes',
      `a node URL's ?proxy= names the proxy before it (${PROXIES.join(', ')}), got ${JSON.stringify(proxy)}`,
    );
  }
  const path = url.pathname.replace(/^\/+/, '');
  if (path !== '' && !/^(?:[0-9]|1[0-5])$/.test(path)) {
    throw new InvalidArgumentError('nodes', `a node URL's path is its database number (0-15), got /${path}`);
  }
  const db = path === '' ? 0 : Number(path);
  const username = url.username ? decodeURIComponent(url.username) : null;
  if (proxy !== null && (db !== 0 || username !== null)) {
    throw new InvalidArgumentError(
      'nodes',
      `twemproxy serves database 0 only and takes a password alone (its redis_auth), no user: ` +
        `${db !== 0 ? `drop /${db}` : 'drop the user name'} from this ?proxy=twemproxy URL`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return {
    host,
    port: url.port ? Number(url.port) : 6379,
    tls: url.protocol === 'rediss:',
    username,
    password: url.password ? decodeURIComponent(url.password) : null,
    db,
    ...(proxy !== null ? { proxy: proxy as (typeof PROXIES)[number] } : {}),
  };
}
