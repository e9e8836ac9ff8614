import 'server-only';
import { consoleKeys } from '../console-keys';
import { readMajority, writeEveryMaster, type WriteResult } from '../masters';

/**
 * Where session revocations live: on the masters, so a logout, a password change or "sign out
 * everywhere" holds after a console restart and in every console process behind a load balancer.
 *
 * A revocation is written to every master; a check reads until a majority has answered (or one
 * says "revoked"). A majority written and a majority read always share a master, so a revocation
 * that reached a majority is seen by every check that reaches a majority. When no master answers
 * at all, a process still refuses what it revoked itself (kept in memory) and accepts the rest on
 * the signature alone: an operator must not be locked out of the console in the very incident
 * where the masters are down; the console can do nothing to the masters then either.
 */
export interface RevocationStore {
  revoke(sid: string, untilMs: number): Promise<WriteResult>;
  signOutEverywhere(username: string, atMs: number, ttlMs: number): Promise<WriteResult>;
  isRevoked(session: { sid: string; username: string; issuedAt: number }): Promise<boolean>;
}

export class MastersRevocationStore implements RevocationStore {
  private readonly revokedHere = new Map<string, number>();
  private readonly notBeforeHere = new Map<string, number>();

  async revoke(sid: string, untilMs: number): Promise<WriteResult> {
    this.sweep();
    this.revokedHere.set(sid, untilMs);
    const ttl = Math.max(1, untilMs - Date.now());
    const key = consoleKeys().sessionRevoked(sid);
    return writeEveryMaster((c) => c.set(key, '1', 'PX', ttl));
  }

  async signOutEverywhere(username: string, atMs: number, ttlMs: number): Promise<WriteResult> {
    this.notBeforeHere.set(username, Math.max(atMs, this.notBeforeHere.get(username) ?? 0));
    const key = consoleKeys().userNotBefore(username);
    // Never move the mark back (two sign-outs racing): keep the larger, and keep it as long as a
    // session issued before it could still be alive.
    return writeEveryMaster((c) => c.eval(RAISE_NOT_BEFORE, 1, key, String(atMs), String(ttlMs)));
  }

  async isRevoked(session: { sid: string; username: string; issuedAt: number }): Promise<boolean> {
    if (this.revokedHere.has(session.sid) || session.issuedAt <= (this.notBeforeHere.get(session.username) ?? -1)) return true;
    const keys = consoleKeys();
    const revokedKey = keys.sessionRevoked(session.sid);
    const notBeforeKey = keys.userNotBefore(session.username);
    const { answers } = await readMajority(
      async (c) => {
        const [revoked, notBefore] = (await c.pipeline().exists(revokedKey).get(notBeforeKey).exec()) ?? [];
        if (revoked?.[0] || notBefore?.[0]) throw revoked?.[0] ?? notBefore?.[0];
        return revoked?.[1] === 1 || session.issuedAt <= Number(notBefore?.[1] ?? -1);
      },
      (revoked) => revoked,
    );
    return answers.some(Boolean);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [sid, until] of this.revokedHere) if (until < now) this.revokedHere.delete(sid);
  }
}

/** KEYS[1] = the not-before key; ARGV = at (ms), ttl (ms). Raises the mark, never lowers it. */
const RAISE_NOT_BEFORE = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local at = tonumber(ARGV[1])
if at > current then current = at end
redis.call('SET', KEYS[1], string.format('%d', current), 'PX', ARGV[2])
return current
`;
