/**
 * What a grant group (grant-group.ts) reads as evidence about a node, as pure functions: why a fast
 * read cannot vouch for itself, the vote a member gets when this client has evidence of a loss,
 * a counter of INFO stats, a failed reply.
 */
import type { GrantReply, Probe } from './grant-verdict';
import { QUARANTINE_CAUSES, type QuarantineCause } from './vocabulary';

/** Evidence only this client has that the node's locks may be gone: a quarantine it must start (probe.lua ARGV[5]). */
export type Evidence = 'rollback' | 'clock-jump';

/**
 * Why the fast read cannot vouch for itself (null: it can). Every fast read is read after the
 * batch's SETs; what makes it worth anything is that nothing replaced the data between the check
 * that reconciled it and now: the WATCH armed since then did not fire (watchedBefore), the anchor
 * is still there, and no key was evicted and no RESETSTAT hid an eviction since that check
 * (INFO stats against what the check recorded in the sentinel).
 */
export function suspectOf(watchedBefore: boolean, fields: readonly unknown[], anchor: number, stats: string): string | null {
  if (!watchedBefore) return 'unwatched';
  if (anchor !== 1) return 'anchor';
  const recordedEvicted = fields[5];
  if (recordedEvicted !== null && recordedEvicted !== undefined && statNumber(stats, 'evicted_keys') !== Number(recordedEvicted))
    return 'evicted';
  const recordedProcessed = Number(fields[6] ?? 0);
  if (statNumber(stats, 'total_commands_processed') < recordedProcessed) return 'resetstat';
  return null;
}

/**
 * The vote of a member judged on evidence: quarantined, until what the forced check wrote (or now),
 * for the cause the check recorded (an eviction it found itself comes before the evidence: the
 * WATCH also fires when the anchor is evicted), or the evidence's.
 */
export function evidenceVote(probe: Probe | null, evidence: Evidence): GrantReply {
  const until = Number(probe?.until ?? 0);
  const found = probe?.check?.cause;
  const cause = found && (QUARANTINE_CAUSES as readonly string[]).includes(found) ? (found as QuarantineCause) : evidence;
  return [2, Number.isFinite(until) && until > 0 ? until : Date.now(), cause, probe?.check?.started ?? false];
}

/** A counter of an INFO section (`name:<digits>`), or NaN. */
function statNumber(info: string, name: string): number {
  const at = info.indexOf(`\n${name}:`);
  if (at < 0) return Number.NaN;
  const from = at + name.length + 2;
  let end = from;
  while (end < info.length && info.charCodeAt(end) >= 48 && info.charCodeAt(end) <= 57) end++;
  return Number(info.slice(from, end));
}

export function failure(reply: unknown): Error | null {
  return reply instanceof Error ? reply : null;
}
