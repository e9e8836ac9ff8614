/**
 * Releases merged per batch (script-group.ts): a run of releases one LockNode queues back to back
 * goes out as one release-many.lua call, which runs each member's compare-and-delete in issue order. A Lua
 * call's fixed cost was most of a release's server CPU at concurrency 64.
 *
 * Why mutual exclusion and fence order still hold:
 * - Each member does exactly what its own release.lua call did: delete each of its keys that holds
 *   its token (publishing when it asked to), nothing else. A key held by another token is never
 *   touched, so no member can hit a newer holder, whoever else is in the batch.
 * - The script runs atomically, so nothing runs between members: a stronger ordering than separate
 *   calls, never a weaker one.
 * - The merged call stands exactly where its members stood in the connection's command order (only
 *   a run of releases queued back to back is merged: script-group.ts), so every member still runs
 *   after its own SETs on this connection (what protocol.ts relies on for cleanups) and before
 *   whatever was queued after it.
 * - Releases never touch the fence register, so fence order is as before.
 */
import { bulkStrings, ScriptCall } from './resp';
import { RELEASE_MANY_SCRIPT, RELEASE_SCRIPT } from './scripts';
import type { Mergeable } from './script-group';

/** One release (or cleanup) of one lock on every node: built once, sent alike to each. */
export class ReleaseCall implements Mergeable {
  /** Its keys and its part of the ARGV of release-many.lua, encoded once for every node's batch. */
  readonly encodedKeys: string;
  readonly encodedArgv: string;
  readonly argvCount: number;
  private call: ScriptCall | null = null;

  constructor(
    readonly keys: readonly string[],
    readonly token: string,
    /** The pub/sub channel to publish the release on; '' for a failed attempt's cleanup. */
    readonly channel: string,
    readonly resources: readonly string[],
  ) {
    this.encodedKeys = bulkStrings(keys);
    this.encodedArgv = bulkStrings([token, keys.length, channel]) + bulkStrings(resources);
    this.argvCount = 3 + resources.length;
  }

  /** release.lua with these arguments: what a batch of one sends. */
  get single(): ScriptCall {
    return (this.call ??= new ScriptCall(RELEASE_SCRIPT, this.keys.length, [...this.keys, this.token, this.channel, ...this.resources]));
  }
}

/** release-many.lua for these members (see its header for the layout). */
export function mergeReleases(members: readonly ReleaseCall[]): ScriptCall {
  let keys = '';
  let argv = '';
  let keyCount = 0;
  let argvCount = 0;
  for (const member of members) {
    keys += member.encodedKeys;
    argv += member.encodedArgv;
    keyCount += member.keys.length;
    argvCount += member.argvCount;
  }
  return new ScriptCall(RELEASE_MANY_SCRIPT, keyCount, keys + argv, keyCount + argvCount);
}
