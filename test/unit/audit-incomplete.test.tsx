import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AUDIT_INCOMPLETE, type AuditEntry } from '../../lib/api/audit';
import { DetailRow, EntryRow } from '../../components/audit/audit-rows';

/**
 * A force-release is written to the audit log before its first delete; a
 * console that dies before the end leaves that entry with the outcome `incomplete`. The Audit
 * screen marks it with a badge that says what it means, never as a plain outcome among others.
 */
const entry = (outcome: string): AuditEntry => ({
  id: 'e1',
  at: Date.UTC(2026, 10, 28, 12, 0, 0),
  actor: 'op',
  role: 'operator',
  action: 'lock.force-release',
  target: 'crash-1',
  reason: 'incident 9',
  outcome,
  before: [{ node: 1, token: 'tok-a', pttlMs: 3_000 }],
  after: null,
  detail: 'token tok-a…',
  holder: 'principal=client:billing owner=billing-7',
});

const row = (e: AuditEntry) =>
  renderToStaticMarkup(
    <table>
      <tbody>
        <EntryRow entry={e} open={false} onToggle={() => undefined} />
        <DetailRow entry={e} />
      </tbody>
    </table>,
  );

describe('an incomplete audit entry', () => {
  it('carries a badge that explains it, in the row and in its detail', () => {
    const html = row(entry(AUDIT_INCOMPLETE));
    expect(html).toMatch(/data-testid="audit-incomplete"[^>]*title="Recorded before the action began[^"]*"[^>]*>incomplete</);
    expect(html).toContain('incomplete: Recorded before the action began');
  });

  it('a completed entry has none', () => {
    expect(row(entry('ok'))).not.toContain('audit-incomplete');
  });
});
