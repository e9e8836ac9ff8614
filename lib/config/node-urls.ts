import { isRedlockError, nodeLabel, parseNodeUrl, type NodeAddress } from '@redlock-console/redlock';
import { ConfigError } from './errors';

export interface NodeEndpoint {
  /** The URL as given (user and password included). */
  url: string;
  /** host:port, safe to show (no credentials). */
  label: string;
  host: string;
  port: number;
  tls: boolean;
}

const EXAMPLE = 'redis://:password@10.0.0.5:6379,redis://10.0.0.6:6379';

/** Parse REDLOCK_NODES: comma-separated redis:// or rediss:// URLs (user and password allowed). */
export function parseNodeUrls(value: string, variable = 'REDLOCK_NODES'): NodeEndpoint[] {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new ConfigError(`${variable} is empty; list your masters, e.g. ${EXAMPLE}`);
  if (entries.length > 15) throw new ConfigError(`${variable} lists ${entries.length} masters; at most 15 are supported`);
  const seen = new Set<string>();
  return entries.map((entry, i) => {
    const where = `${variable} entry ${i + 1} (${redact(entry)})`;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError(`${where} is not a URL; expected redis://[user:password@]host:port, e.g. ${EXAMPLE}`);
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      throw new ConfigError(`${where} must start with redis:// or rediss://, not ${url.protocol}//`);
    }
    if (!url.hostname) throw new ConfigError(`${where} has no host`);
    const port = url.port ? Number(url.port) : 6379;
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new ConfigError(`${where} has a bad port`);
    // The rest is the lock core's own rule (one parser for what a node URL may say): a query, a
    // fragment or a database outside 0-15 would pass here and fail every lock route later.
    let address: NodeAddress;
    try {
      address = parseNodeUrl(entry);
    } catch (err) {
      if (!isRedlockError(err)) throw err;
      throw new ConfigError(`${where}: ${err.message.replace(/^nodes: /, '')}`);
    }
    const label = nodeLabel(entry);
    if (seen.has(label))
      throw new ConfigError(`${where} repeats ${label}; each master must be listed once (Redlock needs independent nodes)`);
    seen.add(label);
    return { url: entry, label, host: address.host, port: address.port, tls: address.tls };
  });
}

/** The URL with any password replaced by ***, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/(\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}
