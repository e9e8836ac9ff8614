/**
 * What an acquire attempt sends each node in its first round, encoded once (see grant.ts for the
 * commands and why their order keeps the guarantees).
 */
import { encodeCommand, ScriptCall } from './resp';
import { ACQUIRE_SCRIPT, QUARANTINE_SCRIPT } from './scripts';

/** The commands every attempt of one prefix sends the same way, encoded once. */
export interface NodeProbes {
  readonly fenceKey: string;
  readonly epoch: Buffer;
  readonly time: Buffer;
  readonly fence: Buffer;
  readonly quarantine: ScriptCall;
}

const probeCache = new Map<string, NodeProbes>();

/** `<prefix>epoch`, `<prefix>fence` and `maxTtlMs` → the probes (cached: a Redlock reuses them). */
export function nodeProbes(epochKey: string, fenceKey: string, maxTtlMs: number): NodeProbes {
  const id = `${epochKey}\n${fenceKey}\n${maxTtlMs}`;
  let probes = probeCache.get(id);
  if (!probes) {
    probes = {
      fenceKey,
      epoch: encodeCommand(['HMGET', epochKey, 'createdAt', 'quarantineUntil']),
      time: encodeCommand(['TIME']),
      fence: encodeCommand(['GET', fenceKey]),
      quarantine: new ScriptCall(QUARANTINE_SCRIPT, 2, [epochKey, fenceKey, maxTtlMs]),
    };
    if (probeCache.size > 64) probeCache.clear();
    probeCache.set(id, probes);
  }
  return probes;
}

/** One attempt's first round, the same bytes for every node. */
export interface GrantPlan {
  readonly lockKeys: readonly string[];
  /** The grant: SET NX GET (one resource) or the acquire script (several). */
  readonly grant: Buffer;
  /** The acquire script's EVAL form, for a node that lost its script cache (several resources). */
  readonly scriptCall: ScriptCall | null;
  readonly quarantine: boolean;
  readonly fenced: boolean;
  readonly probes: NodeProbes;
}

/** `value` is what every lock key gets: `<token> <metadata>` (value.ts). */
export function grantPlan(lockKeys: readonly string[], value: string, ttlMs: number,
  options: { quarantine: boolean; fenced: boolean; probes: NodeProbes }): GrantPlan {
  if (lockKeys.length === 1) {
    return { lockKeys, scriptCall: null, ...options, grant: encodeCommand(['SET', lockKeys[0]!, value, 'NX', 'GET', 'PX', ttlMs]) };
  }
  const call = new ScriptCall(ACQUIRE_SCRIPT, lockKeys.length, [...lockKeys, value, ttlMs]);
  return { lockKeys, scriptCall: call, ...options, grant: call.evalshaPayload() };
}
