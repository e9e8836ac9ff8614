'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useConnectionHealth } from '@/lib/client/connection-health';
import { useNow } from '../locks/countdown';
import { formatAgo, formatClock } from '../locks/format';

/**
 * Under the top bar while the console gets no answer: since when (the last good read), that the
 * screens show what they read then, and a retry. The screens keep their last data: an operator
 * in an incident still sees the last state instead of an empty page.
 */
export function ConnectionBanner() {
  const health = useConnectionHealth();
  const queryClient = useQueryClient();
  const now = useNow();
  if (!health.failing) return null;
  return (
    <div className="connection-banner" role="alert" data-testid="connection-banner">
      <span>
        <strong>The console is not answering.</strong>{' '}
        {health.lastOkAt ? (
          <>
            Last good read at <span data-testid="connection-last-ok">{formatClock(health.lastOkAt)}</span>
            {now ? ` (${formatAgo(health.lastOkAt, now)})` : ''}: the screens show what they read then.
          </>
        ) : (
          'Nothing could be read yet.'
        )}{' '}
        <span className="connection-problem">{health.problem}</span>
      </span>
      <button type="button" className="button" onClick={() => void queryClient.refetchQueries({ type: 'active' })}>
        Retry now
      </button>
    </div>
  );
}
