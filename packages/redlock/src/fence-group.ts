/**
 * Fence confirmations merged per batch (script-group.ts): a run of confirmations one LockNode
 * queues back to back goes out as one fence-many.lua call, which reads the register once and raises it once.
 *
 * Why fence order and mutual exclusion still hold (fence-round.ts has the argument for one call):
 * - Each member is confirmed exactly when fence.lua would have confirmed it: every one of its keys
 *   still holds its token at the moment the script checks. Members that are not get 0 and write
 *   nothing, as before.
 * - The register ends at max(register, the confirmed members' fences): the state raising it member
 *   by member leaves, and nothing runs in between (the script is atomic). So for every confirmed
 *   member, its key was there and the register was ≥ its fence when the script ended: what the
 *   argument needs of each node of the quorum C.
 * - The merged call stands exactly where its members stood in the connection's command order (only
 *   a run of confirmations queued back to back is merged: script-group.ts), so each still runs after
 *   its own grant's SET and before whatever was queued after it.
 * - The metadata rewrite (SETRANGE in place: extend.lua) of a member touches only keys holding its own
 *   token, seen there by the same script.
 */
import { bulkStrings, ScriptCall } from './resp';
import { FENCE_MANY_SCRIPT, FENCE_SCRIPT } from './scripts';
import type { Mergeable } from './script-group';

/** The confirmation of one fenced grant, built once and sent alike to each node it asks. */
export class FenceCall implements Mergeable {
  readonly single: ScriptCall;
  /** Its lock keys and its part of the ARGV of fence-many.lua, encoded once for every node's batch. */
  readonly encodedKeys: string;
  readonly encodedArgv: string;

  constructor(
    readonly epochKey: string,
    readonly lockKeys: readonly string[],
    token: string,
    fence: number,
    meta: string,
  ) {
    this.single = new ScriptCall(FENCE_SCRIPT, lockKeys.length + 1, [epochKey, ...lockKeys, token, String(fence), meta]);
    this.encodedKeys = bulkStrings(lockKeys);
    this.encodedArgv = bulkStrings([token, String(fence), meta, lockKeys.length]);
  }
}

/** fence-many.lua for these members (they share the epoch key: one group per key prefix). */
export function mergeFences(members: readonly FenceCall[]): ScriptCall {
  let keys = bulkStrings([members[0]!.epochKey]);
  let argv = '';
  let keyCount = 1;
  for (const member of members) {
    keys += member.encodedKeys;
    argv += member.encodedArgv;
    keyCount += member.lockKeys.length;
  }
  return new ScriptCall(FENCE_MANY_SCRIPT, keyCount, keys + argv, keyCount + 4 * members.length);
}
