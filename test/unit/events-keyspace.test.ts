import { describe, expect, it } from 'vitest';
import { NodeKeyEvents } from '@/lib/server/events/keyspace-source';

/**
 * One node's keyevents as the lock core causes them on the channels the events read (`set`,
 * `expire`, `del`, `expired`). A grant is `SET … NX PX` (Redis reports `set` then `expire`); an
 * extend runs `PEXPIRE … GT` (`expire`); the rewrites of a held lock's value (the fence round, the
 * extend's count) are `SETRANGE`, on a channel the events do not read.
 */
describe('keyevents of a lock key on one node', () => {
  const run = (events: NodeKeyEvents, sequence: [string, string][]) => sequence.map(([event, key]) => events.classify(event, key));

  it('a grant is one lock.granted: its own PX is not an extension', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
      ]),
    ).toEqual(['lock.granted', null]);
  });

  it('an extend is one lock.extended, of a lock granted while watching or before', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['expire', 'old'],
        ['set', 'k'],
        ['expire', 'k'],
        ['expire', 'k'],
        ['expire', 'old'],
      ]),
    ).toEqual(['lock.extended', 'lock.granted', null, 'lock.extended', 'lock.extended']);
  });

  it('after a release or an expiry the next set is a grant again', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
        ['del', 'k'],
        ['set', 'k'],
        ['expire', 'k'],
        ['expired', 'k'],
        ['set', 'k'],
      ]),
    ).toEqual(['lock.granted', null, 'lock.released', 'lock.granted', null, 'lock.expired', 'lock.granted']);
  });

  it('a key that vanished without a del (evicted, flushed, a node restarted empty) is granted at its next grant', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'k'],
        ['expire', 'k'],
        // FLUSHALL, an eviction (`evicted`, not read), a restart from an empty data directory…
        ['set', 'k'],
        ['expire', 'k'],
      ]),
    ).toEqual(['lock.granted', null, 'lock.granted', null]);
  });

  it('keys are told apart (a multi-resource grant sets each in turn); another event between a set and its PX breaks the pair', () => {
    const events = new NodeKeyEvents();
    expect(
      run(events, [
        ['set', 'a'],
        ['expire', 'a'],
        ['set', 'b'],
        ['expire', 'b'],
        ['expire', 'a'],
        ['set', 'c'],
        ['rename_from', 'x'],
        ['expire', 'c'],
      ]),
    ).toEqual(['lock.granted', null, 'lock.granted', null, 'lock.extended', 'lock.granted', null, 'lock.extended']);
  });

  it('reset: the event after a lost connection is not taken for the PX of a grant seen before it', () => {
    const events = new NodeKeyEvents();
    expect(run(events, [['set', 'k']])).toEqual(['lock.granted']);
    events.reset();
    expect(run(events, [['expire', 'k']])).toEqual(['lock.extended']);
  });
});
