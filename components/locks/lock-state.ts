import { LOCK_STATES, type LockView } from '@/lib/api/locks';
import { toneColor, type Tone } from '../ui/palette';

export type LockStateName = LockView['state'];

/** The one place a lock state gets its tone: the matrix, the tabs, the overview totals and the charts all read it here. */
export const STATE_INFO: Record<LockStateName, { label: string; tone: Tone; help: string; rank: number }> = {
  split: {
    label: 'split',
    tone: 'bad',
    help: 'Two or more tokens and none on a quorum: nobody holds this lock, and stale keys block new grants.',
    rank: 0,
  },
  partial: {
    label: 'partial',
    tone: 'info',
    help: 'Keys on fewer than a quorum of nodes, one token, more than a down voter short: a failed attempt’s leftovers or a lock that lost its majority.',
    rank: 1,
  },
  expiring: { label: 'expiring', tone: 'warn', help: 'A quorum holds one token, but its validity is about to run out.', rank: 2 },
  held: {
    label: 'held',
    tone: 'ok',
    help: 'A quorum of nodes holds one token (or every node read but one short, a voter down: the down node is marked): a client can count on this lock.',
    rank: 3,
  },
};

export const STATE_ORDER: readonly LockStateName[] = LOCK_STATES;

/** A lock state's colour, for inline styles and chart series. */
export function stateColor(state: LockStateName): string {
  return toneColor(STATE_INFO[state].tone);
}
