import type { VoteReason } from './vocabulary';

/**
 * Per-node outcomes of one round of a lock operation (acquire, fence confirmation, extend, release).
 * Every error and every outcome event carries them, so an operator can see which node said what.
 */

/**
 * Why a node voted as it did.
 * - `ok`: it did what was asked (granted, confirmed, extended, deleted).
 * - `contended`: another token holds one of the keys (acquire).
 * - `quarantined`: the node lost its data, restarted or evicted keys, and votes against until
 *   `quarantineUntil` (acquire; `detail` says why).
 * - `unsafe-eviction`: the node's maxmemory-policy can evict lock keys, the sentinel or the fence
 *   register (anything but noeviction), so its grants cannot be relied on (acquire).
 * - `ceiling-mismatch`: the node records another lease ceiling (maxTtlMs) than this client's (acquire).
 * - `lost`: a key no longer holds our token (fence confirmation, extend).
 * - `not-held`: there was nothing of ours to delete (release; not an error).
 * - `timeout`: no reply before the round's deadline.
 * - `pending`: no reply yet when the round was decided early (a quorum for, or one no longer possible).
 * - `error`: the command failed (connection down, refused, script error, backlog full); see `detail`.
 * - `not-asked`: the round did not involve this node (e.g. a fence confirmation goes to voters only).
 */
export type { VoteReason } from './vocabulary';

/**
 * Nodes are numbered from 1 in the order of the list a Redlock is built with: node 1 is
 * `nodes[0]`, and a round's votes are in that order (`votes[n - 1].node === n`). The one scheme
 * across the core's votes, events and errors, the console, its HTTP API, metrics, live events,
 * the cluster supervisor and the scenarios: they all say "node 3" for the same node. (The chaos
 * harness's own logs index nodes by array position and convert where they read core errors.) Why from 1: these numbers are
 * read by people (errors, logs, the console, alerts), and the console's nodes were numbered from 1
 * before the core had votes; arrays stay arrays, indexed at `n - 1`.
 */
export interface Vote {
  /** The node's number (from 1, in the order of the Redlock's node list). */
  readonly node: number;
  /** host:port of the node (never credentials). */
  readonly label: string;
  readonly vote: 'for' | 'against';
  readonly reason: VoteReason;
  /** Error message or other explanation, when there is one. */
  readonly detail?: string;
  /** Node clock (epoch ms) at which its quarantine ends, for `quarantined` votes. */
  readonly quarantineUntil?: number;
}

/** Count the votes with a given reason. */
export function countReason(votes: readonly Vote[], reason: VoteReason): number {
  let count = 0;
  for (const v of votes) if (v.reason === reason) count++;
  return count;
}

/** A compact one-line summary for error messages: `3 for, 1 contended, 1 timeout`. */
export function summarizeVotes(votes: readonly Vote[]): string {
  let inFavour = 0;
  const against = new Map<VoteReason, number>();
  for (const v of votes) {
    if (v.vote === 'for') inFavour++;
    else against.set(v.reason, (against.get(v.reason) ?? 0) + 1);
  }
  const parts = [`${inFavour} for`];
  for (const [reason, count] of against) parts.push(`${count} ${reason}`);
  return parts.join(', ');
}
