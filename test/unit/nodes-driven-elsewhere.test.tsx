import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { NodeView } from '../../lib/api/nodes';
import { NodeActionButtons } from '../../components/nodes/node-action-buttons';
import { NodesNotices } from '../../components/nodes/nodes-notices';

/**
 * Two consoles on one teaching sandbox: one drives the supervisor's node actions at a time
 * (replicas-leases.test.ts shows the other refuses them with 409). The other console's Nodes
 * screen must not offer buttons that can only be refused: it names the console that runs them.
 */
const node = { id: 2, up: true, process: 'up', fault: 'pass', quarantine: null } as unknown as NodeView;
const render = (drivenBy: string | null) =>
  renderToStaticMarkup(<NodeActionButtons node={node} sandbox drivenBy={drivenBy} onAction={() => undefined} />);

describe("a node's process and network actions on a console that does not drive the supervisor", () => {
  it('are offered on the console that drives it (or when none does yet)', () => {
    const html = render(null);
    expect(html).toContain('data-testid="node-action-2-crash"');
    expect(html).not.toContain('node-actions-elsewhere-2');
  });

  it('are replaced by the name of the console that runs them', () => {
    const html = render('console-a');
    expect(html).not.toMatch(/data-testid="node-action-2-(crash|stop|restart|partition|pause|heal|latency)/);
    expect(html).toContain('data-testid="node-actions-elsewhere-2"');
    expect(html).toContain('run through console console-a');
  });

  it('the screen says which console runs them, to an operator only', () => {
    const html = renderToStaticMarkup(<NodesNotices role="operator" sandbox drivenBy="console-a" />);
    expect(html).toContain('data-testid="driven-elsewhere-notice"');
    expect(html).toContain('Node actions run through console console-a.');
    expect(renderToStaticMarkup(<NodesNotices role="operator" sandbox drivenBy={null} />)).not.toContain('driven-elsewhere');
    expect(renderToStaticMarkup(<NodesNotices role="viewer" sandbox drivenBy="console-a" />)).not.toContain('driven-elsewhere');
  });
});
