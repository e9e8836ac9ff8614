import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, AUDIT_FAMILIES, auditQuerySchema } from '../../lib/api/audit';
import { NODE_ACTION_NAMES } from '../../lib/api/node-actions';
import { AuditFilters } from '../../components/audit/audit-filters';

/** `scenario.run` was missing from the action filter. Every audit action comes from one list. */
describe('the one list of audit actions', () => {
  it('has every node action, the scenario run, and each action once', () => {
    for (const a of NODE_ACTION_NAMES) expect(AUDIT_ACTIONS).toContain(`node.${a}`);
    expect(AUDIT_ACTIONS).toContain('scenario.run');
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
  });

  it('is what the Audit screen offers: every family and every action in the action filter', () => {
    const html = renderToStaticMarkup(
      <AuditFilters
        state={{ actor: '', action: '', sinceParam: '24h', limit: 500, absoluteSince: undefined }}
        actors={[]}
        setParam={() => undefined}
      >
        {null}
      </AuditFilters>,
    );
    const select = html.slice(html.indexOf('Action<select'), html.indexOf('</select>', html.indexOf('Action<select')));
    const values = [...select.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);
    expect(values).toEqual(['', ...AUDIT_FAMILIES, ...AUDIT_ACTIONS]);
    expect(select).toContain('Every scenario action');
  });

  it('is what the API filters by: a family or an action, nothing else', () => {
    for (const action of [...AUDIT_FAMILIES, ...AUDIT_ACTIONS]) expect(auditQuerySchema.safeParse({ action }).success, action).toBe(true);
    expect(auditQuerySchema.safeParse({}).success).toBe(true);
    for (const action of ['no-such', 'node.', 'scenario.crash', 'NODE'])
      expect(auditQuerySchema.safeParse({ action }).success, action).toBe(false);
  });
});
