/**
 * How the harness names the semaphores and read-write locks it checks, and their per-slot registers.
 * One owner for these names: the workers write with them, the checkers group by them.
 */
import type { SlotKind } from './history';

/** The object a slot acquire takes: `sem:<name>` (a semaphore) or `rw:<name>` (a read-write lock, both modes). */
export function slotObject(kind: SlotKind, name: string): string {
  return `${kind === 'sem' ? 'sem' : 'rw'}:${name}`;
}

/** The checkers' name of one slot of an object: `<object>@<slot>`. */
export function slotResource(object: string, slot: number): string {
  return `${object}@${slot}`;
}

/** The history's lock id of one slot of a grant (its writes to that slot's register use it). */
export function slotLockId(lock: string, slot: number): string {
  return `${lock}@${slot}`;
}

const SLOT_REGISTER = 'slot/';

/**
 * The register of one slot: `f:slot/<object>@<slot>` (fenced: one high-water mark per slot, as a
 * fenced store keeps for a semaphore, docs/semaphores.md) or `u:slot/…` (unfenced).
 */
export function slotRegister(fenced: boolean, kind: SlotKind, name: string, slot: number): string {
  return `${fenced ? 'f' : 'u'}:${SLOT_REGISTER}${slotResource(slotObject(kind, name), slot)}`;
}

/** Is this register resource a slot's (not a mutex's)? */
export function isSlotRegister(resource: string): boolean {
  return resource.slice(2).startsWith(SLOT_REGISTER);
}
