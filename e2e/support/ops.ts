import type { APIResponse, Page } from '@playwright/test';
import { E2E_API_KEY } from '../../playwright.config';
import { sandbox } from './sandbox';
import { repairNode } from './test';

/** The e2e API-key client (role `client`): what a service taking locks would send. */
export const AS_CLIENT = { authorization: `Bearer ${E2E_API_KEY}` };

/** Take a lock through the lock service as the API-key client; returns the raw answer. */
export function acquire(page: Page, resource: string, ttlMs = 5_000): Promise<APIResponse> {
  return page.request.post('/api/locks', { headers: AS_CLIENT, data: { resource, ttlMs } });
}

/** POST as the signed-in user with the session's CSRF token (what the console's own client does). */
export async function postAsSession(page: Page, url: string, data: unknown): Promise<APIResponse> {
  const me = (await (await page.request.get('/api/auth/me')).json()) as { csrfToken: string };
  return page.request.post(url, { data, headers: { 'x-csrf-token': me.csrfToken } });
}

/**
 * Put a node back the way the suite started it: healed, running with AOF always, clean epoch. A node
 * that ran without persistence comes back empty, so it is marked clean (audited, as an operator would).
 */
export async function restoreNode(_page: Page, id: number): Promise<void> {
  // Through the control channel and the node itself, not the console's HTTP API: a cleanup must not
  // depend on the server under test, nor on the time the test has left (a test that timed out once
  // reported its cleanup's GET /api/auth/me as the request that "never answered").
  const control = sandbox();
  await control.act(id, { action: 'heal' });
  await control.act(id, { action: 'restart', persistence: 'aof-always' });
  const [node] = (await control.nodes()).filter((n) => n.id === id);
  await repairNode(node!);
}
