'use client';

import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { SLOT_HISTORY_MAX_SLOTS, type SlotHold } from '@/lib/api/slot-history';
import type { SlotKind, SlotLockView } from '@/lib/api/slot-locks';
import { GrantedCell, HistoryTable, HoldCells } from './lock-history-panel';
import { slotHistoryQuery } from './slot-history-query';
import detail from './lock-detail.module.css';
import cards from './slot-locks.module.css';
import styles from './slot-history.module.css';

/**
 * The History section of a semaphore's or read-write lock's detail: who held its slots, when,
 * with which fence, and how each hold ended, newest first, in the mutex's History look (its cells).
 *
 * How it reads: every slot is a lock of its own in the lock history, under its slot name, so the
 * section asks the server for the merged history of a PAGE of slots
 * (GET /api/slot-locks/{kind}/{resource}/history?slots=…, at most 16): one request every 3 s,
 * however many slots the page has. The server names the slots with the key layout's functions
 * (the browser bundle carries no copy of them), merges a permit's slots and the writer's into one
 * row while they end together, and keeps out what is not the slot's (a mutex of the same name).
 * Not all slots at once: a semaphore may have 256, each a history read on every master, on the
 * masters that grant the locks. A lock of at most 16 slots is one page and has no picker; a larger
 * one has a select (keyboard: Tab, arrows) of "held now" (the slots held when it opened, the first
 * 16) and each page of 16, and opens on "held now" when something is held, else slots 0–15.
 * The writer's entries name its first 8 slots (the history keeps 8 names an entry), so slots 0–15
 * always show it. A waiting writer's intent has no history: the lock service records grants.
 */
interface Choice {
  value: string;
  label: string;
  slots: number[];
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/** The pages of slots one can read: those held now (when any), then every page of 16. */
function choicesOf(kind: SlotKind, lock: SlotLockView | null): Choice[] {
  const size = lock?.limit ?? (kind === 'semaphore' ? LIMITS.maxSemaphoreLimit : LIMITS.maxResources);
  const pages = range(0, Math.ceil(size / SLOT_HISTORY_MAX_SLOTS)).map((p) => {
    const slots = range(p * SLOT_HISTORY_MAX_SLOTS, Math.min(size, (p + 1) * SLOT_HISTORY_MAX_SLOTS));
    return { value: `page-${p}`, label: `slots ${slots[0]}–${slots.at(-1)}`, slots };
  });
  const held = [...new Set(lock?.holders.flatMap((h) => h.slots) ?? [])].sort((a, b) => a - b).slice(0, SLOT_HISTORY_MAX_SLOTS);
  if (pages.length <= 1 || held.length === 0) return pages;
  return [{ value: 'held', label: `held now (slot${held.length > 1 ? 's' : ''} ${held.join(', ')})`, slots: held }, ...pages];
}

/** The column the slot history adds after the grant time: its head's text and its cells' `data-label`. */
const SLOT_COLUMN = 'Slot';

/** Which slot(s) a row is about, and the holder's role. */
function SlotCell({ hold }: { hold: SlotHold }) {
  const list = `slot${hold.slots.length > 1 ? 's' : ''} ${hold.slots.join(', ')}`;
  return (
    <td data-label={SLOT_COLUMN} data-testid="slot-history-slots" data-slots={hold.slots.join(',')} data-role={hold.role}>
      <strong>{hold.role === 'writer' ? 'writer' : list}</strong>
      <span className={detail.nodeLabel}>{hold.role === 'writer' ? `every slot (${list} read)` : hold.role}</span>
    </td>
  );
}

function SlotHistoryTable({ holds }: { holds: SlotHold[] }) {
  return (
    <HistoryTable label="History of the slots' holds" after={[SLOT_COLUMN]} className={styles.table}>
      {holds.map((hold) => (
        <tr key={`${hold.token}:${hold.slots.join(',')}`} data-testid="history-hold" data-ended={hold.ended}>
          <GrantedCell hold={hold} />
          <SlotCell hold={hold} />
          <HoldCells hold={hold} />
        </tr>
      ))}
    </HistoryTable>
  );
}

export function SlotHistory({ kind, resource, lock }: { kind: SlotKind; resource: string; lock: SlotLockView | null }) {
  const choices = choicesOf(kind, lock);
  const [picked, setPicked] = useState(() => choices[0]!.value);
  const choice = choices.find((c) => c.value === picked) ?? choices.find((c) => c.value !== 'held') ?? choices[0]!;
  const { data, error, isPending } = useQuery(slotHistoryQuery(kind, resource, choice.slots));
  const pickerId = useId();
  return (
    <section
      className={cards.card}
      aria-labelledby="slot-history-title"
      data-testid="slot-history"
      data-loading-state={isPending ? 'loading' : error && !data ? 'error' : 'ready'}
    >
      <div className={styles.head}>
        <h2 id="slot-history-title">History</h2>
        {choices.length > 1 ? (
          <span className={styles.picker}>
            <label htmlFor={pickerId}>Slots</label>
            <select id={pickerId} value={choice.value} onChange={(e) => setPicked(e.target.value)} data-testid="slot-history-picker">
              {choices.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          </span>
        ) : (
          <span className="muted small">{choice.slots.length > 1 ? `all ${choice.slots.length} slots` : 'its one slot'}</span>
        )}
      </div>
      {error && !data ? (
        <p role="alert" className={detail.emptyNote}>
          The history could not be read: {error.message}
        </p>
      ) : isPending ? (
        <p className={detail.emptyNote}>Reading the masters…</p>
      ) : data.holds.length === 0 ? (
        <p className={detail.emptyNote}>Nothing recorded on {choice.label}: the history keeps a slot&apos;s last 32 entries for a week.</p>
      ) : (
        <SlotHistoryTable holds={data.holds} />
      )}
      <p className={`muted ${styles.note}`}>
        {data ? `Read from ${data.nodesRead} of ${data.nodesRead + data.nodesFailed} masters. ` : ''}
        {kind === 'rwlock' ? 'A waiting writer’s intent is not in the history: the lock service records grants.' : ''}
      </p>
    </section>
  );
}
