'use client';

import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import styles from './scenarios.module.css';

/**
 * The scenarios' glossary, defined here once: the words a newcomer meets in the narration, each
 * explained where it first appears in a block of text (hover, focus or tap it). The definitions
 * follow the Redis distlock page where they are Redlock's, and say so where they are this
 * library's own additions (the fence, the sentinel, the quarantine).
 */
export interface GlossaryEntry {
  /** The headword, shown in the tooltip. */
  term: string;
  /** The forms found in a text (a regular-expression source, matched whole-word, case-insensitive). */
  forms: string;
  definition: string;
}

export const GLOSSARY: readonly GlossaryEntry[] = [
  {
    term: 'validity horizon',
    forms: 'validity horizon',
    definition:
      'How long, counted from the moment a client starts asking, a grant can still leave it any time at all: the TTL minus the drift allowance. The lock core stops waiting for nodes at that point; a grant that could only be completed later is refused (LockExpired) and undone.',
  },
  {
    term: 'validity',
    forms: 'validity',
    definition:
      'How long a client may count on a lock it was granted: the TTL minus the time the asking took (step 4 of the Redis distlock page), minus the drift allowance (the page\'s "few milliseconds in order to compensate for clock drift"). When it runs out the client must stop, whatever keys are left on the nodes.',
  },
  {
    term: 'lease ceiling',
    forms: 'lease ceilings?',
    definition:
      'The longest TTL any client may ask for under this key prefix (maxTtlMs), recorded on every node. No lock a node granted can outlive it, so a node that may have forgotten its locks is kept out of every vote for one lease ceiling.',
  },
  {
    term: 'drift allowance',
    forms: 'drift (?:allowance|margin)|driftFactor|allowance',
    definition:
      'What a client takes off its validity because clocks do not all run at exactly the same rate: TTL × driftFactor + 2 ms (driftFactor is 0.01 by default). It is sized for small differences in rate: a clock that jumps by more than it breaks the guarantee.',
  },
  {
    term: 'quorum',
    forms: 'quorum|majority|majorities',
    definition:
      'More than half of the nodes: 3 of 5. Any two majorities share at least one node; as long as that node keeps the first holder’s key, a second client cannot collect a majority of its own.',
  },
  {
    term: 'TTL',
    forms: 'TTLs?',
    definition:
      'Time to live: a key deletes itself on its node after this long. For a lock it is the auto-release time, so a lock whose holder vanished frees itself.',
  },
  {
    term: 'fencing token',
    forms: 'fencing tokens?|fences?',
    definition:
      'A number that grows with every grant of a lock. Redlock itself produces none; this library adds one. A storage that checks it remembers the highest number it has seen and refuses a write carrying a lower one, so a holder whose lease ran out without its knowing cannot overwrite a newer holder.',
  },
  {
    term: 'epoch sentinel',
    forms: '(?:epoch )?sentinels?',
    definition:
      'A small key this library keeps on every node for each key prefix. It names the redis-server process that was checked and says “this node still has every lock it granted”. A node found without it is treated as having lost its data.',
  },
  {
    term: 'quarantine',
    forms: 'quarantined|quarantines?',
    definition:
      'This library’s automation of the Redis distlock page’s crash rule (keep a restarted node out for a bit longer than the longest TTL). A node found without its sentinel (its data is gone) or, with the node checks on, running a new redis-server process, or the same process with its data gone back in time (a restore in place) or its clock jumped, votes “quarantined” until one lease ceiling has passed.',
  },
  {
    term: 'mark clean',
    forms: 'mark(?:s|ed|ing)? (?:the nodes |them |every node |it )?clean',
    definition:
      'Writing a fresh epoch sentinel on a node: the statement “this node has forgotten no lock under this prefix”. Safe only when it is true, as for a prefix nobody has used, or for a node that stayed away for a whole lease ceiling.',
  },
  {
    term: 'aof-always',
    forms: 'aof-always',
    definition:
      'Redis appends every write to its append-only file and forces it to disk (fsync) before it answers (appendfsync always). A crash then loses nothing the node acknowledged, at the price of a disk flush on every write.',
  },
  {
    term: 'token',
    forms: 'tokens?',
    definition:
      'The random value a client picks for one acquire and writes as the lock key’s value on every node (the distlock page’s “random value”). Only its holder can extend or release the lock: a release deletes the key only where it still holds this token.',
  },
  {
    term: 'compare-and-delete',
    forms: 'compare-and-delete',
    definition:
      'How a lock is released: on each node, one script deletes the key only if its value is still the releasing client’s token (the distlock page’s release script), so a client whose lease ran out never deletes the next holder’s key.',
  },
  {
    term: 'not awaited',
    forms: 'not awaited',
    definition:
      'A node’s answer the client stopped waiting for: once the answers in hand decide the outcome (a majority granted, or so many refused that no majority is possible), the rest cannot change it.',
  },
  {
    term: 'LockContendedError',
    forms: 'LockContended(?:Error)?|contended',
    definition:
      'The refusal when the lock is held: so many nodes answered that another client’s key is there that no majority is possible. The client may retry later.',
  },
  {
    term: 'QuorumUnavailableError',
    forms: 'QuorumUnavailable(?:Error)?',
    definition:
      'The refusal when too few nodes can vote at all (down, cut off, quarantined) to make a majority, whoever holds the lock. With one node configured, that one node is the majority.',
  },
  {
    term: 'LockExpiredError',
    forms: 'LockExpired(?:Error)?',
    definition:
      'The refusal when a majority said yes but the asking took so long that no validity would be left: the client deletes the keys it got and reports the lock as expired before it began.',
  },
  {
    term: 'fsync',
    forms: 'fsync',
    definition:
      'Forcing what a process wrote out of the operating system’s cache onto the disk. Until then a power loss or a crash of the machine can lose it; each fsync waits for the disk.',
  },
  {
    term: 'AOF',
    forms: 'AOF|append-only file',
    definition:
      'Redis’s append-only file: every write is appended to it, and a restarted node replays it. How often it is forced to disk is appendfsync: always (aof-always) or everysec (once a second, AOF’s default).',
  },
  {
    term: 'RDB snapshot',
    forms: 'RDB(?: snapshots?)?|snapshots?',
    definition:
      'A copy of a node’s whole dataset written at one moment (Redis’s default persistence, taken at its save points). A node restarted from one comes back with the data of that moment: every later write, lock keys included, is gone.',
  },
  {
    term: 'semaphore',
    forms: 'semaphores?',
    definition:
      'A lock that up to N clients may hold at once (N permits). This library builds one of N permits as N locks, its slots: neither the Redis distlock page nor the debate covers semaphores (docs/semaphores.md explains why counting holders on each node is unsafe).',
  },
  {
    term: 'permit',
    forms: 'permits?',
    definition:
      'One of the N places of a semaphore. Taking a permit is taking one free slot, granted by a majority of the nodes like any lock; the permit ends as a lock does (release, or its validity runs out).',
  },
  {
    term: 'slot',
    forms: 'slots?',
    definition:
      'One of a semaphore’s N locks, each with a key of its own on every node (sem:<name>:<i>). A slot has at most one holder, as a mutex does, so a semaphore has at most N holders — as long as no node forgets a slot it granted.',
  },
];

const PATTERN = new RegExp(`\\b(?:${GLOSSARY.map((e) => `(${e.forms})`).join('|')})\\b`, 'gi');

/** The pieces of `text`: plain strings, and the first use of each glossary term with its entry. */
export function glossSplit(text: string): Array<string | { text: string; entry: GlossaryEntry }> {
  const out: Array<string | { text: string; entry: GlossaryEntry }> = [];
  const used = new Set<string>();
  let at = 0;
  for (const m of text.matchAll(PATTERN)) {
    const index = m.slice(1).findIndex((g) => g !== undefined);
    const entry = GLOSSARY[index];
    if (!entry || used.has(entry.term)) continue;
    used.add(entry.term);
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push({ text: m[0], entry });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** One glossary word: a button that shows its definition on hover, on focus and on a tap; Escape hides it. */
export function Term({ entry, children }: { entry: GlossaryEntry; children: ReactNode }) {
  const id = useId();
  const [hover, setHover] = useState(false);
  const [focus, setFocus] = useState(false);
  const [pinned, setPinned] = useState(false);
  const [dismissed, setDismissed] = useState(false);
  const open = !dismissed && (hover || focus || pinned);
  const tip = useRef<HTMLSpanElement>(null);
  const [shift, setShift] = useState(0);
  // Keep the definition inside the window (a word near the right edge of a phone screen).
  useLayoutEffect(() => {
    const el = tip.current;
    if (!open || !el) return;
    el.style.transform = '';
    const rect = el.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    const over = rect.right - (width - 8);
    setShift(over > 0 ? -Math.min(over, rect.left - 8) : rect.left < 8 ? 8 - rect.left : 0);
  }, [open]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape') setDismissed(true);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
  const onKeyDown = (e: KeyboardEvent) => {
    // Space and Enter work the button; they must not also reach the player's shortcuts (Space pauses).
    if (e.key === ' ' || e.key === 'Enter') e.stopPropagation();
  };
  return (
    <span
      className={styles.term}
      onMouseEnter={() => {
        setHover(true);
        setDismissed(false);
      }}
      onMouseLeave={() => setHover(false)}
    >
      <button
        type="button"
        className={styles.termButton}
        aria-describedby={id}
        data-testid="glossary-term"
        data-term={entry.term}
        onFocus={() => {
          setFocus(true);
          setDismissed(false);
        }}
        onBlur={() => {
          setFocus(false);
          setPinned(false);
        }}
        onClick={() => {
          setPinned((p) => !p);
          setDismissed(false);
        }}
        onKeyDown={onKeyDown}
      >
        {children}
      </button>
      <span
        ref={tip}
        role="tooltip"
        id={id}
        className={styles.termTip}
        hidden={!open}
        style={shift ? { transform: `translateX(${shift}px)` } : undefined}
        data-testid="glossary-tip"
      >
        <strong>{entry.term}</strong> — {entry.definition}
      </span>
    </span>
  );
}

/** `text` with the first use of each glossary term explained on hover and focus. */
export function Glossed({ text }: { text: string }) {
  return (
    <>
      {glossSplit(text).map((piece, i) =>
        typeof piece === 'string' ? (
          piece
        ) : (
          <Term key={i} entry={piece.entry}>
            {piece.text}
          </Term>
        ),
      )}
    </>
  );
}
