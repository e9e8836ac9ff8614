import type { Redis } from 'ioredis';
import { epochKey, legacyFenceKey } from '@redlock-console/redlock';
import { anchorKey } from '../../src/keys';
import { PROBE_SCRIPT } from '../../src/scripts';

/** probe.lua's arguments after ARGV[1] (the mode), as src/scripts/probe.lua's header names them. */
export interface ProbeArgs {
  /** ARGV[2]: the client's lease ceiling (maxTtlMs). */
  ceiling: number;
  /** ARGV[3]: what a check detects ('2' unless said: data loss, restarts and evictions). */
  detect?: string;
  /** ARGV[4]: whether the caller may start a quarantine on a node without a sentinel (true unless said). */
  mayStart?: boolean;
  /** ARGV[5]: a cause the caller has evidence of ('rollback', 'clock-jump'; '' unless said). */
  forced?: string;
}

/**
 * probe.lua run directly on one real redis-server for the sentinel at `prefix`: a check
 * (`mode` 'check', ARGV[1] '1', a client's first contact with a node) or the fast read ('fast',
 * ARGV[1] '0'). Its reply as Redis gave it: each test reads the fields it judges.
 */
export async function runProbe(
  node: Redis,
  prefix: string,
  mode: 'check' | 'fast',
  args: ProbeArgs,
): Promise<Array<string | number | null>> {
  return (await node.eval(
    PROBE_SCRIPT.source,
    3,
    epochKey(prefix),
    legacyFenceKey(prefix),
    anchorKey(prefix),
    mode === 'check' ? '1' : '0',
    String(args.ceiling),
    args.detect ?? '2',
    args.mayStart === false ? '0' : '1',
    args.forced ?? '',
  )) as Array<string | number | null>;
}

/** The node's time when a check ran (its TIME, fields 9 and 10 of a check's reply), in ms. */
export const probeNowMs = (reply: ReadonlyArray<string | number | null>): number =>
  Number(reply[9]) * 1000 + Math.floor(Number(reply[10]) / 1000);
