import type { NodeView, SeenSentinel } from '@/lib/api/nodes';

/** The sentinel the operator is judging, as the server compares it (null: none to compare, e.g. an old sentinel without a process). */
export function seenOf(node: NodeView): SeenSentinel | undefined {
  const q = node.quarantine;
  if (!q || q.state === 'unknown') return { runId: null };
  return q.runId ? { runId: q.runId, ...(q.createdAt !== null ? { createdAt: q.createdAt } : {}) } : undefined;
}

/** Whether two readings of a node show the same process and the same epoch sentinel. */
export const sameSentinel = (a: NodeView, b: NodeView) =>
  (a.quarantine?.runId ?? null) === (b.quarantine?.runId ?? null) &&
  (a.quarantine?.createdAt ?? null) === (b.quarantine?.createdAt ?? null) &&
  a.runId === b.runId;

/** What to warn about before marking a node clean: the server's warning, else an uptime shorter than the lease ceiling; null when none. */
export function markCleanWarning(judged: NodeView, maxTtlMs: number): string | null {
  return (
    judged.quarantine?.markCleanWarning ??
    (judged.uptimeMs !== null && judged.uptimeMs < maxTtlMs
      ? `it has been up only ${Math.round(judged.uptimeMs / 1000)} s, less than the lease ceiling (${maxTtlMs / 1000} s)`
      : null)
  );
}

/** A message as a sentence of its own: capitalised, with its full stop. */
export const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
