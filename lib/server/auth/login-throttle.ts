import 'server-only';
import { consoleKeys } from '../console-keys';
import { onEveryMaster, readMajority } from '../masters';
import { LoginLimiter } from './rate-limit';

/**
 * Login throttling that stops password guessing without letting a stranger lock the operator out.
 * State lives on the masters, so every console process shares it (and a restart does not reset it).
 *
 * - Per attempt scope — the client's address + the username, or a trusted device (a browser that
 *   signed in as this user before, auth/devices.ts): at most `attempts` failures per
 *   `attemptWindowMs`, then 429 until the window ends. Guessing from one address is capped; a
 *   stranger's failures fill only the stranger's own scope.
 * - Per username, from any address: past `userThreshold` failures in `userWindowMs`, attempts from
 *   browsers that are not trusted devices take turns, one every `turnMs` for the whole username
 *   (a slowdown, not a lockout: a correct password still gets in, after its turn). An attempt
 *   whose turn is more than `maxWaitMs` away is answered 429 at once. Trusted devices skip the
 *   queue, so a distributed attack that keeps the queue full still cannot keep the operator out.
 *
 * Which address a request comes from is decided by REDLOCK_TRUST_PROXY (lib/config/trust-proxy.ts):
 * X-Forwarded-For is believed only from trusted proxies. When no master answers, an in-memory
 * floor of the same per-scope limit still holds in this process.
 */
export const LOGIN_LIMITS = Object.freeze({
  attempts: 5,
  attemptWindowMs: 5 * 60_000,
  userThreshold: 10,
  userWindowMs: 15 * 60_000,
  turnMs: 1_000,
  maxWaitMs: 5_000,
});
export type LoginLimits = typeof LOGIN_LIMITS;

export class LoginThrottle {
  private readonly local: LoginLimiter;

  constructor(readonly limits: LoginLimits = LOGIN_LIMITS) {
    this.local = new LoginLimiter(limits.attempts, limits.attemptWindowMs);
  }

  /** Seconds before `scope` may try again (0: now), and the username's recent failures from anywhere. */
  async check(scope: string[], username: string): Promise<{ retryAfterS: number; userFailures: number }> {
    const keys = consoleKeys();
    const scopeKey = keys.login('scope', ...scope);
    const userKey = keys.login('user', username);
    const { answers } = await readMajority(async (c) => {
      const replies = (await c.pipeline().get(scopeKey).pttl(scopeKey).get(userKey).exec()) ?? [];
      const failed = replies.find(([err]) => err);
      if (failed) throw failed[0];
      return { count: Number(replies[0]![1] ?? 0), pttl: Number(replies[1]![1]), user: Number(replies[2]![1] ?? 0) };
    });
    let retryAfterS = this.local.retryAfter(scope.join('\0'));
    for (const a of answers) {
      if (a.count >= this.limits.attempts) retryAfterS = Math.max(retryAfterS, Math.max(1, Math.ceil(a.pttl / 1000)));
    }
    return { retryAfterS, userFailures: Math.max(0, ...answers.map((a) => a.user)) };
  }

  /**
   * This attempt's turn for a username under attack: how long to wait before checking the password,
   * or null when the turn is more than maxWaitMs away (answer 429; nothing is reserved then).
   */
  async turn(username: string): Promise<number | null> {
    const key = consoleKeys().login('turn', username);
    const now = Date.now();
    const results = await onEveryMaster(
      (c) => c.eval(TAKE_TURN, 1, key, String(now), String(this.limits.turnMs), String(this.limits.maxWaitMs)) as Promise<number>,
    );
    const waits = results.flatMap((r) => (r.status === 'fulfilled' ? [Number(r.value)] : []));
    if (waits.some((w) => w < 0)) return null;
    return Math.max(0, ...waits);
  }

  async fail(scope: string[], username: string | null): Promise<void> {
    this.local.fail(scope.join('\0'));
    const keys = consoleKeys();
    const scopeKey = keys.login('scope', ...scope);
    const userKey = username === null ? null : keys.login('user', username);
    await onEveryMaster(async (c) => {
      const p = c.pipeline().eval(COUNT_IN_WINDOW, 1, scopeKey, String(this.limits.attemptWindowMs));
      if (userKey) p.eval(COUNT_IN_WINDOW, 1, userKey, String(this.limits.userWindowMs));
      await p.exec();
    });
  }

  /** A correct password clears its own scope (not the username's count: that is everyone's). */
  async succeed(scope: string[]): Promise<void> {
    this.local.succeed(scope.join('\0'));
    const key = consoleKeys().login('scope', ...scope);
    await onEveryMaster((c) => c.del(key));
  }
}

/** KEYS[1] = counter; ARGV[1] = window (ms). A fixed window opened by the first failure. */
const COUNT_IN_WINDOW = `
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`;

/**
 * KEYS[1] = the username's next free turn (ms); ARGV = now, turn (ms), max wait (ms).
 * Returns the wait before this attempt's turn, or -1 (nothing reserved) when it is too far away.
 */
const TAKE_TURN = `
local now = tonumber(ARGV[1])
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now, nextFree)
if start - now > tonumber(ARGV[3]) then return -1 end
local after = start + tonumber(ARGV[2])
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', after - now + 1000)
return start - now
`;
