/**
 * The slots of a semaphore permit or of a read or write lock, named by a caller that holds only
 * its token and the slot numbers it was granted (the console's stateless HTTP lock service):
 * Redlock.extendPermitToken / releasePermitToken / extendRwToken / releaseRwToken act on the keys
 * built here, with the mutex's own extend and release rounds (extend-round.ts, release-round.ts).
 *
 * Why mutual exclusion and fence order still hold (they are extendToken's and releaseToken's
 * arguments, over slot keys instead of lock keys):
 * - Nothing here grants. A slot is held by whoever a quorum of its key holds the token of, and a
 *   token is SET once, at its grant (protocol.ts). The extend is a compare-and-pexpire: it
 *   prolongs a slot key only where it already holds this token, and PEXPIRE GT never shortens
 *   one; an absent key stays absent, another holder's key (another token) is left alone. So an
 *   extend by token prolongs only what its token was granted, and succeeds only on a quorum that
 *   still holds the token on every slot named, which has held it without a gap (extend-round.ts):
 *   nobody else can have been granted those slots meanwhile. Naming slots the token does not hold
 *   fails the extend (LockExpiredError) and changes nothing on another holder's keys; naming a
 *   subset of the permit's slots extends that subset, and the others expire as a lease does.
 * - The release is a compare-and-delete: it deletes a slot key only where it holds this token,
 *   so a wrong token, or slots another grant holds, deletes nothing (a newer holder is never hit),
 *   and a release only ends holds the token had.
 * - Fences are drawn only at a grant (fence-round.ts); an extend (PEXPIRE) and a release (DEL)
 *   write no register and no key's fence, so the order of fences per slot is what the grants made.
 * - The slot keys are those the grants wrote (keys.ts): `<prefix>sem:<r>:<i>` and
 *   `<prefix>rw:<r>:<i>`, never a mutex key, and never a read-write lock's intent (`intent` is no
 *   slot number): a writer's intent is the acquire's own, withdrawn when the acquire ends.
 * - The release publishes the slots' names on the release channel: the names semaphore and
 *   read-write waiters wake on (semaphore.ts, rwlock.ts), as a release through the handle does.
 */
import { InvalidArgumentError } from './errors';
import { rwSlotKey, rwSlotName, semaphoreSlotKey, semaphoreSlotName } from './keys';
import { describe } from './settings';
import { checkResources } from './validate';
import { LIMITS } from './vocabulary';

/** A semaphore's slots, or a read-write lock's reader slots. */
export type SlotKind = 'semaphore' | 'rwlock';

/** The slot names (as a permit's `resources`) and keys of `slots` of `resource`, ascending. */
export interface SlotTargets {
  readonly resource: string;
  readonly slots: readonly number[];
  readonly names: readonly string[];
  readonly keys: readonly string[];
}

/** Validate `resource` and `slots` (InvalidArgumentError before any traffic) and build their names and keys. */
export function slotTargets(kind: SlotKind, keyPrefix: string, resource: unknown, slots: unknown): SlotTargets {
  if (typeof resource !== 'string') throw new InvalidArgumentError('resource', `must be a string, got ${describe(resource)}`);
  try {
    checkResources(resource);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new InvalidArgumentError('resource', err.message.slice(err.argument.length + 2));
    throw err;
  }
  // A semaphore has up to maxSemaphoreLimit slots, a read-write lock up to maxResources reader slots.
  const bound = kind === 'semaphore' ? LIMITS.maxSemaphoreLimit : LIMITS.maxResources;
  if (!Array.isArray(slots) || slots.length === 0 || slots.length > LIMITS.maxResources)
    throw new InvalidArgumentError('slots', `must be an array of 1 to ${LIMITS.maxResources} slot numbers, got ${describe(slots)}`);
  for (const slot of slots as unknown[])
    if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot >= bound)
      throw new InvalidArgumentError('slots', `each must be a whole number from 0 to ${bound - 1}, got ${describe(slot)}`);
  const sorted = (slots as number[]).slice().sort((a, b) => a - b);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i] === sorted[i - 1]) throw new InvalidArgumentError('slots', `must not repeat a slot, got ${sorted[i]} twice`);
  const name = kind === 'semaphore' ? semaphoreSlotName : rwSlotName;
  const key = kind === 'semaphore' ? semaphoreSlotKey : rwSlotKey;
  return {
    resource,
    slots: Object.freeze(sorted),
    names: Object.freeze(sorted.map((s) => name(resource, s))),
    keys: Object.freeze(sorted.map((s) => key(keyPrefix, resource, s))),
  };
}
