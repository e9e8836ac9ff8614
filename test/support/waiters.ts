import type { Redlock } from '@redlock-console/redlock';
import { waitFor } from './cluster';

/** What a test reads of a Redlock's release waiters (packages/redlock/src/waiters.ts; private there). */
interface WaitersView {
  readonly size: number;
  readonly subscribed: boolean;
  readonly byResource: ReadonlyMap<string, ReadonlySet<{ readonly state: 'trying' | 'sleeping' | 'woken' }>>;
}

/**
 * Resolves once `count` acquires of `redlock` wait: each registered after its failed attempt, the
 * release channel subscribed (the subscription's arrival wakes every waiter once: that attempt too
 * is over), and each sleeping out its retry delay. A release from now on reaches them only as a
 * message, which is what a wake-up test must measure.
 */
export async function waitersAsleep(redlock: Redlock, count = 1, timeoutMs = 10_000): Promise<void> {
  const waiters = (redlock as unknown as { waiters: WaitersView }).waiters;
  const asleep = () =>
    waiters.size === count &&
    waiters.subscribed &&
    [...waiters.byResource.values()].every((set) => [...set].every((w) => w.state === 'sleeping'));
  await waitFor(asleep, timeoutMs, `${count} waiter(s) subscribed and asleep`);
}
