import type { Role } from '../../api/common';

/** Who is calling, and how they proved it. */
export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'session'; username: string; role: Exclude<Role, 'client'>; sid: string; csrf: string; expiresAt: number; issuedAt: number }
  | { kind: 'api-key'; username: string; role: 'client' }
  | { kind: 'metrics-token'; username: 'metrics' };

/**
 * What a route needs. `read`: viewers and operators. `lock`: the lock service (API-key clients and
 * operators, whose playground takes locks). `operate`: operators only. `metrics`: a scrape token or
 * a viewer/operator session. `public`: anyone (health, ready, login).
 */
export type Permission = 'public' | 'read' | 'lock' | 'operate' | 'metrics';

export function allows(principal: Principal, permission: Permission): boolean {
  switch (permission) {
    case 'public':
      return true;
    case 'read':
      return principal.kind === 'session';
    case 'lock':
      return principal.kind === 'api-key' || (principal.kind === 'session' && principal.role === 'operator');
    case 'operate':
      return principal.kind === 'session' && principal.role === 'operator';
    case 'metrics':
      return principal.kind === 'metrics-token' || principal.kind === 'session';
  }
}

export function actorOf(principal: Principal): { actor: string; role: string } {
  switch (principal.kind) {
    case 'anonymous':
      return { actor: 'anonymous', role: 'anonymous' };
    case 'metrics-token':
      return { actor: 'metrics', role: 'metrics' };
    default:
      return { actor: principal.username, role: principal.role };
  }
}
