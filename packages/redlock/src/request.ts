import { hostname } from 'node:os';
import { anchorKey, epochKey, legacyFenceKey, lockKeysOf } from './keys';
import { InvalidArgumentError } from './errors';
import { nodeProbes, type NodeProbes } from './grant-plan';
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

/** A ttl within [1, maxTtlMs] that leaves some validity after drift; InvalidArgumentError otherwise. */
export function checkLeaseTtl(ttlMs: unknown, settings: Readonly<RedlockSettings>): number {
  const ttl = checkTtl(ttlMs, settings.maxTtlMs);
  if (validityHorizonMs(ttl, settings.driftFactor) < 1) {
    throw new InvalidArgumentError('ttlMs', `is too short to leave 1 ms of validity after clock drift, got ${ttl}`);
  }
  return ttl;
}

/**
 * Validate one acquire (throws InvalidArgumentError before any traffic) and precompute what its
 * attempts share: the keys, the node probes and the holder metadata. Defaults for owner, host and
 * pid come from the process; caller fields override them. The metadata is kept as JSON without
 * its closing brace: each attempt appends acquiredAt (and a fenced grant its fence).
 */
export function prepareAcquire(
  settings: Readonly<RedlockSettings>,
  resources: unknown,
  ttlMs: unknown,
  options: RequestOptions,
): AcquireRequest {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `must be an object, got ${describe(options)}`);
  const names = checkResources(resources);
  const ttl = checkLeaseTtl(ttlMs, settings);
  if (options.fenced !== undefined && typeof options.fenced !== 'boolean') {
    throw new InvalidArgumentError('fenced', `must be a boolean, got ${describe(options.fenced)}`);
  }
  const callerMeta = checkMetadata(options.metadata);
  const prefix = settings.keyPrefix;
  return {
    resources: names,
    ttlMs: ttl,
    fenced: options.fenced ?? true,
    lockKeys: lockKeysOf(prefix, names),
    metaHead: callerMeta.length === 0 ? defaultMetaHead(ttl) : metaHeadOf(callerMeta, ttl),
    probes: probesOf(settings),
  };
}

/**
 * The node probes of a Redlock, made once per (frozen) settings object, which each Redlock has its
 * own of: they carry the Redlock's view of the cluster (ClusterView), so they are never shared.
 */
const probesBySettings = new WeakMap<Readonly<RedlockSettings>, NodeProbes>();

export function probesOf(settings: Readonly<RedlockSettings>, nodeCount = 0): NodeProbes {
  let probes = probesBySettings.get(settings);
  if (probes === undefined) {
    const detect = !settings.quarantine ? '0' : settings.nodeChecks ? '2' : '1';
    probes = nodeProbes(
      epochKey(settings.keyPrefix),
      legacyFenceKey(settings.keyPrefix),
      settings.maxTtlMs,
      detect,
      settings.nodeCheckIntervalMs,
      nodeCount,
      { anchorKey: anchorKey(settings.keyPrefix), driftFactor: settings.driftFactor },
    );
    probesBySettings.set(settings, probes);
  }
  return probes;
}

function metaHeadOf(callerMeta: readonly string[], ttl: number): string {
  const fields = new Map<string, string>([
    ['owner', DEFAULT_OWNER],
    ['host', PROCESS_HOST],
    ['pid', PROCESS_PID],
  ]);
  for (let i = 0; i < callerMeta.length; i += 2) fields.set(callerMeta[i]!, callerMeta[i + 1]!);
  fields.set('ttlMs', String(ttl)).set('extensions', '0');
  let metaHead = '{';
  for (const [field, value] of fields) metaHead += `${metaHead.length > 1 ? ',' : ''}${JSON.stringify(field)}:${JSON.stringify(value)}`;
  return metaHead;
}

/** Without caller fields the head depends on the ttl only: kept for the last few ttls seen. */
const defaultHeads = new Map<number, string>();

function defaultMetaHead(ttl: number): string {
  let head = defaultHeads.get(ttl);
  if (head === undefined) {
    head = metaHeadOf([], ttl);
    if (defaultHeads.size >= 64) defaultHeads.clear();
    defaultHeads.set(ttl, head);
  }
  return head;
}
