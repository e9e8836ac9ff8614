'use client';

import { useRef, useState, type ReactNode } from 'react';
import { AUDIT_ACTIONS, AUDIT_FAMILIES, type AuditFamily } from '@/lib/api/audit';
import { formatDateTime } from '../ui/format';
import styles from './audit.module.css';

export const SINCE_PRESETS = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: 'all', label: 'All time', ms: null },
] as const;

// Typed by the families of the one list (lib/api/audit.ts): a new family cannot go without a label.
const FAMILY_LABEL: Record<AuditFamily, string> = {
  node: 'Every node action',
  lock: 'Every lock action',
  login: 'Every sign-in',
  logout: 'Every sign-out',
  scenario: 'Every scenario action',
};
const GROUP_LABEL: Record<AuditFamily, string> = {
  node: 'Node actions',
  lock: 'Locks',
  login: 'Sign-ins',
  logout: 'Sign-outs',
  scenario: 'Scenarios',
};

export const ACTION_GROUPS: Array<{ label: string; options: Array<[string, string]> }> = [
  {
    label: 'Families',
    options: [['', 'All actions'], ...AUDIT_FAMILIES.map((f): [string, string] => [f, FAMILY_LABEL[f]])],
  },
  // Every action the server records (lib/api/audit.ts), grouped by family.
  ...AUDIT_FAMILIES.map((family) => ({
    label: GROUP_LABEL[family],
    options: AUDIT_ACTIONS.filter((a) => a.startsWith(`${family}.`) || a === family).map((a): [string, string] => [a, a]),
  })),
];

export const LIMITS = [100, 500, 1_000, 5_000];

/** What the filters read from and write to the URL. */
export interface AuditFilterState {
  actor: string;
  action: string;
  sinceParam: string;
  limit: number;
  absoluteSince: number | undefined;
}

/**
 * The audit log's filters (actor, action, since, limit), kept in the URL by the screen through
 * `setParam`; the actor is typed into a draft and applied after a pause. `children`: the read's
 * status, shown at the end of the form.
 */
export function AuditFilters({
  state,
  actors,
  setParam,
  children,
}: {
  state: AuditFilterState;
  actors: readonly string[];
  setParam: (changes: Record<string, string | null>) => void;
  children: ReactNode;
}) {
  const { actor, action, sinceParam, limit, absoluteSince } = state;
  const preset = SINCE_PRESETS.find((p) => p.value === sinceParam);
  const [actorDraft, setActorDraft] = useState(actor);
  const debounce = useRef<ReturnType<typeof setTimeout> | null>(null);

  const onActor = (value: string) => {
    setActorDraft(value);
    if (debounce.current) clearTimeout(debounce.current);
    debounce.current = setTimeout(() => setParam({ actor: value.trim() || null }), 350);
  };

  return (
    <form
      className={styles.filters}
      role="search"
      aria-label="Filter the audit log"
      onSubmit={(e) => {
        e.preventDefault();
        setParam({ actor: actorDraft.trim() || null });
      }}
    >
      <label className={styles.field}>
        Actor
        <span className={styles.searchWrap}>
          <input
            type="search"
            value={actorDraft}
            onChange={(e) => onActor(e.target.value)}
            placeholder="exact user name"
            list="audit-actors"
            data-shortcut-search
            aria-keyshortcuts="/"
            autoComplete="off"
            spellCheck={false}
          />
          {actorDraft ? null : <kbd aria-hidden="true">/</kbd>}
        </span>
        <datalist id="audit-actors">
          {actors.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
      </label>
      <label className={styles.field}>
        Action
        <select value={action} onChange={(e) => setParam({ action: e.target.value || null })}>
          {ACTION_GROUPS.map((g) => (
            <optgroup key={g.label} label={g.label}>
              {g.options.map(([value, label]) => (
                <option key={value || 'all'} value={value}>
                  {label}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </label>
      <label className={styles.field}>
        Since
        <select
          value={preset ? preset.value : 'custom'}
          onChange={(e) => setParam({ since: e.target.value === '24h' ? null : e.target.value })}
        >
          {SINCE_PRESETS.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
          {preset ? null : <option value="custom">Since {absoluteSince ? formatDateTime(absoluteSince) : '…'}</option>}
        </select>
      </label>
      <label className={styles.field}>
        Limit
        <select
          value={limit}
          onChange={(e) => setParam({ limit: e.target.value === '500' ? null : e.target.value })}
          style={{ minWidth: 100 }}
        >
          {LIMITS.map((l) => (
            <option key={l} value={l}>
              {l.toLocaleString()}
            </option>
          ))}
        </select>
      </label>
      {actor || action || sinceParam !== '24h' || limit !== 500 ? (
        <button
          type="button"
          className="button button-ghost"
          onClick={() => {
            setActorDraft('');
            setParam({ actor: null, action: null, since: null, limit: null });
          }}
        >
          Clear filters
        </button>
      ) : null}
      {children}
    </form>
  );
}
