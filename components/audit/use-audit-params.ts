'use client';

import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import type { AuditView } from '@/lib/client/ops-queries';
import { LIMITS, SINCE_PRESETS, type AuditFilterState } from './audit-filters';

/**
 * The Audit screen's filters as the URL holds them (actor, action, since, limit), the view the
 * query reads, and `setParam` to change them (the URL replaced, not pushed; `onChange` first).
 */
export function useAuditParams(onChange: () => void): {
  state: AuditFilterState;
  view: AuditView;
  filtered: boolean;
  setParam: (changes: Record<string, string | null>) => void;
} {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const actor = params.get('actor') ?? '';
  const action = params.get('action') ?? '';
  const sinceParam = params.get('since') ?? '24h';
  const limit = LIMITS.includes(Number(params.get('limit'))) ? Number(params.get('limit')) : 500;
  const preset = SINCE_PRESETS.find((p) => p.value === sinceParam);
  const absoluteSince = preset ? undefined : Number.isFinite(Number(sinceParam)) ? Number(sinceParam) : undefined;

  const view: AuditView = {
    actor: actor || undefined,
    action: action || undefined,
    limit,
    since: absoluteSince,
    sinceSpanMs: preset?.ms ?? undefined,
  };
  const setParam = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    onChange();
    const qs = next.toString();
    router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
  };
  return {
    state: { actor, action, sinceParam, limit, absoluteSince },
    view,
    filtered: Boolean(actor || action || sinceParam !== 'all'),
    setParam,
  };
}
