import { hostname } from 'node:os';
import { epochKey, fenceKey } from './epoch';
import { InvalidArgumentError } from './errors';
import type { AcquireRequest } from './protocol';
import { validityHorizonMs } from './quorum';
import { describe, type RedlockSettings } from './settings';
import { checkMetadata, checkResources, checkTtl } from './validate';

const PROCESS_HOST = hostname();
const PROCESS_PID = String(process.pid);
const DEFAULT_OWNER = `${PROCESS_HOST}:${PROCESS_PID}`;

/** What acquire() takes besides the resources and the ttl (validated by {@link prepareAcquire}). */
export interface RequestOptions {
  fenced?: boolean;
  metadata?: Record<string, string>;
}

/** `<prefix>lock:<resource>` then `<prefix>meta:<resource>` for each resource, in order. */
export function lockKeysOf(keyPrefix: string, names: readonly string[]): string[] {
  const keys = new Array<string>(2 * names.length);
  for (let i = 0; i < names.length; i++) {
    keys[i] = `${keyPrefix}lock:${names[i]}`;
    keys[names.length + i] = `${keyPrefix}meta:${names[i]}`;
  }
  return keys;
}

/** A ttl within [1, maxTtlMs] that leaves some validity after drift; InvalidArgumentError otherwise. */
export function checkLeaseTtl(ttlMs: unknown, settings: Readonly<RedlockSettings>): number {
  const ttl = checkTtl(ttlMs, settings.maxTtlMs);
  if (validityHorizonMs(ttl, settings.driftFactor) <= 0) {
    throw new InvalidArgumentError('ttlMs', `is too short to leave any validity after clock drift, got ${ttl}`);
  }
  return ttl;
}

/**
 * Validate one acquire (throws InvalidArgumentError before any traffic) and precompute what its
 * attempts share: the keys and the holder metadata. Defaults for owner, host and pid come from
 * the process; caller fields override them (HSET keeps the last value of a repeated field).
 */
export function prepareAcquire(settings: Readonly<RedlockSettings>, resources: unknown, ttlMs: unknown, options: RequestOptions): AcquireRequest {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', `must be an object, got ${describe(options)}`);
  const names = checkResources(resources);
  const ttl = checkLeaseTtl(ttlMs, settings);
  if (options.fenced !== undefined && typeof options.fenced !== 'boolean') {
    throw new InvalidArgumentError('fenced', `must be a boolean, got ${describe(options.fenced)}`);
  }
  const callerMeta = checkMetadata(options.metadata);
  const prefix = settings.keyPrefix;
  const keys = [epochKey(prefix), fenceKey(prefix), ...lockKeysOf(prefix, names)];
  const metadata = ['owner', DEFAULT_OWNER, 'host', PROCESS_HOST, 'pid', PROCESS_PID, 'ttlMs', String(ttl), 'extensions', '0'];
  for (const field of callerMeta) metadata.push(field);
  return { resources: names, ttlMs: ttl, fenced: options.fenced ?? true, keys, metadata };
}
