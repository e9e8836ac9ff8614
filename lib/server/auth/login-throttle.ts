import 'server-only';
import { consoleKeys } from '../console-keys';
import { onEveryMaster, readMajority } from '../masters';
import { LoginLimiter } from './rate-limit';
import { runScript, script } from './redis-script';

/**
 * Login throttling that stops password guessing without letting a stranger lock the operator out.
 * State lives on the masters, so every console process shares it (and a restart does not reset it).
 *
 * - Per attempt scope — the client's address + the username, or a trusted device (a browser that
 *   signed in as this user before, auth/devices.ts): at most `attempts` failures per
 *   `attemptWindowMs`, then 429 until the window ends. Guessing from one address is capped; a
 *   stranger's failures fill only the stranger's own scope.
 * - Per address, across usernames: at most `addressAttempts` failures per
 *   `addressWindowMs` from one address whatever usernames it names (a new username each time
 *   no longer buys a fresh scope), then 429. Trusted devices are limited per device instead, so a
 *   stranger on the operator's own address cannot keep the operator's browser out.
 * - Per username, from any address: past `userThreshold` failures in `userWindowMs`, attempts from
 *   browsers that are not trusted devices take turns, one every `turnMs` for the whole username
 *   (a slowdown, not a lockout: a correct password still gets in, after its turn). An attempt
 *   whose turn is more than `maxWaitMs` away is answered 429 at once. Trusted devices skip the
 *   queue, so a distributed attack that keeps the queue full still cannot keep the operator out.
 *
 * The count is taken BEFORE the password is checked, in one atomic step with the check (a script
 * on each master: compare with the limit, and count the attempt, or refuse it): concurrent attempts
 * cannot all pass the check before any is counted (100 concurrent wrong passwords had 34
 * checked against a limit of 5). A correct password then clears its scope and gives its address
 * count back; an attempt refused by the password-work budget (auth/password-work.ts) gives both
 * back. An attempt goes ahead when a majority of the masters counted it and none refused it; from
 * one console process every master sees the attempts in the same order, so exactly `attempts` are
 * checked per window. (Several console processes can interleave differently on different masters:
 * at most ⌈N × attempts / majority⌉ then, e.g. 9 for 5 masters.)
 *
 * Which address a request comes from is decided by REDLOCK_TRUST_PROXY (lib/config/trust-proxy.ts):
 * X-Forwarded-For is believed only from trusted proxies. When no master answers, an in-memory
 * floor of the same per-scope and per-address limits still holds in this process.
 */
export const LOGIN_LIMITS = Object.freeze({
  attempts: 5,
  attemptWindowMs: 5 * 60_000,
  addressAttempts: 20,
  addressWindowMs: 5 * 60_000,
  userThreshold: 10,
  userWindowMs: 15 * 60_000,
  turnMs: 1_000,
  maxWaitMs: 5_000,
});
export type LoginLimits = typeof LOGIN_LIMITS;

/** One attempt's place: its scope (address + username, or a trusted device) and, untrusted, its address. */
export interface AttemptScope {
  scope: string[];
  /** The address limited across usernames; null for a trusted device. */
  address: string | null;
}

/** What `reserve` decided: refused (`retryAfterS` > 0), or counted on the masters `counted` (node indexes; late answers join it). */
export interface Reservation {
  retryAfterS: number;
  userFailures: number;
  counted: readonly number[];
}

export class LoginThrottle {
  private readonly local: LoginLimiter;
  private readonly localAddress: LoginLimiter;
  /** Refusals the masters answered, until their window ends (scope or address → ms). */
  private readonly refusedHere = new Map<string, number>();

  constructor(readonly limits: LoginLimits = LOGIN_LIMITS) {
    this.local = new LoginLimiter(limits.attempts, limits.attemptWindowMs);
    this.localAddress = new LoginLimiter(limits.addressAttempts, limits.addressWindowMs);
  }

  /**
   * Count this attempt before its password is checked, or refuse it: `retryAfterS` > 0 means
   * refused (nothing counted); else the attempt is counted against its scope and address, and
   * `userFailures` is the username's recent failures from anywhere.
   */
  async reserve(attempt: AttemptScope, username: string): Promise<Reservation> {
    const localKey = attempt.scope.join('\0');
    const known = this.knownRefusal(attempt);
    if (known > 0) return { retryAfterS: known, userFailures: 0, counted: [] };
    const localWait = Math.max(
      this.local.retryAfter(localKey),
      attempt.address === null ? 0 : this.localAddress.retryAfter(attempt.address),
    );
    if (localWait > 0) return { retryAfterS: localWait, userFailures: 0, counted: [] };
    // Counted here in the same synchronous step as the check above.
    this.local.fail(localKey);
    if (attempt.address !== null) this.localAddress.fail(attempt.address);
    const keys = this.keysOf(attempt);
    const userKey = consoleKeys().login('user', username);
    const l = this.limits;
    const counted: number[] = [];
    const { answers } = await readMajority(
      async (c, node) => {
        const reply = (await runScript(
          c,
          RESERVE,
          [keys[0]!, userKey, ...keys.slice(1)],
          [String(l.attempts), String(l.attemptWindowMs), String(l.addressAttempts), String(l.addressWindowMs)],
        )) as [number, number, string?];
        if (reply[0] === 1) counted.push(node);
        return { ok: reply[0] === 1, value: Number(reply[1]), which: reply[2] === 'address' ? ('address' as const) : ('scope' as const) };
      },
      (a) => !a.ok,
    );
    const refused = answers.filter((a) => !a.ok);
    if (refused.length > 0) {
      this.refundLocal(attempt);
      // The masters that counted it so far give it back (a later one keeps it: stricter, never looser).
      void this.refundMasters(attempt, new Set(counted));
      for (const r of refused)
        this.rememberRefusal(
          r.which === 'address' && attempt.address !== null ? `address\0${attempt.address}` : `scope\0${localKey}`,
          r.value,
        );
      return { retryAfterS: Math.max(1, ...refused.map((a) => Math.ceil(a.value / 1000))), userFailures: 0, counted: [] };
    }
    return { retryAfterS: 0, userFailures: Math.max(0, ...answers.map((a) => a.value)), counted };
  }

  /**
   * Seconds an attempt is still refused for, as the masters last said in this process (0: ask
   * them). A flood from an address past its limit then costs no round trip to the masters until
   * its window ends; the window is the masters' (shared), only remembered here.
   */
  private knownRefusal(attempt: AttemptScope): number {
    const now = Date.now();
    const until = Math.max(
      this.refusedHere.get(`scope\0${attempt.scope.join('\0')}`) ?? 0,
      attempt.address === null ? 0 : (this.refusedHere.get(`address\0${attempt.address}`) ?? 0),
    );
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  private rememberRefusal(key: string, pttlMs: number): void {
    if (pttlMs <= 0) return;
    const now = Date.now();
    if (this.refusedHere.size >= 10_000) for (const [k, until] of this.refusedHere) if (until <= now) this.refusedHere.delete(k);
    if (this.refusedHere.size < 10_000) this.refusedHere.set(key, Math.max(this.refusedHere.get(key) ?? 0, now + pttlMs));
  }

  /** Give back a reserved attempt whose password was not checked (the password-work budget refused it). */
  async refund(attempt: AttemptScope, reservation: Reservation): Promise<void> {
    this.refundLocal(attempt);
    await this.refundMasters(attempt, new Set(reservation.counted));
  }

  /**
   * This attempt's turn for a username under attack: how long to wait before checking the password,
   * or null when the turn is more than maxWaitMs away (answer 429; nothing is reserved then).
   */
  async turn(username: string): Promise<number | null> {
    const key = consoleKeys().login('turn', username);
    const now = Date.now();
    const results = await onEveryMaster(
      (c) => runScript(c, TAKE_TURN, [key], [String(now), String(this.limits.turnMs), String(this.limits.maxWaitMs)]) as Promise<number>,
    );
    const waits = results.flatMap((r) => (r.status === 'fulfilled' ? [Number(r.value)] : []));
    if (waits.some((w) => w < 0)) return null;
    return Math.max(0, ...waits);
  }

  /** A wrong password: counted against the username (its scope and address counted it at `reserve`). */
  async fail(username: string | null): Promise<void> {
    if (username === null) return;
    const userKey = consoleKeys().login('user', username);
    await onEveryMaster((c) => runScript(c, COUNT_IN_WINDOW, [userKey], [String(this.limits.userWindowMs)]));
  }

  /** A correct password clears its own scope and gives its address count back (not the username's count: that is everyone's). */
  async succeed(attempt: AttemptScope, reservation: Reservation): Promise<void> {
    this.local.succeed(attempt.scope.join('\0'));
    if (attempt.address !== null) this.localAddress.refund(attempt.address);
    const [scopeKey, addressKey] = this.keysOf(attempt);
    const counted = new Set(reservation.counted);
    await onEveryMaster(async (c, node) => {
      await Promise.all([c.del(scopeKey!), addressKey && counted.has(node) ? runScript(c, GIVE_BACK, [addressKey], []) : null]);
    });
  }

  private keysOf(attempt: AttemptScope): string[] {
    const keys = consoleKeys();
    return [keys.login('scope', ...attempt.scope), ...(attempt.address === null ? [] : [keys.login('address', attempt.address)])];
  }

  private refundLocal(attempt: AttemptScope): void {
    this.local.refund(attempt.scope.join('\0'));
    if (attempt.address !== null) this.localAddress.refund(attempt.address);
  }

  private async refundMasters(attempt: AttemptScope, only?: ReadonlySet<number>): Promise<void> {
    const keys = this.keysOf(attempt);
    await onEveryMaster(async (c, node) => (only && !only.has(node) ? null : runScript(c, GIVE_BACK, keys, [])));
  }
}

/**
 * KEYS = the scope's counter, the username's failures, [the address's counter]; ARGV = attempts,
 * its window (ms), address attempts, its window (ms). Fixed windows opened by their first attempt.
 * Refuses ({0, ms left, 'scope' | 'address'}) when the scope or the address is at its limit, counting nothing; else
 * counts the attempt in both and returns {1, the username's failures}.
 */
const RESERVE = script(`
local scope = tonumber(redis.call('GET', KEYS[1]) or '0')
if scope >= tonumber(ARGV[1]) then return {0, redis.call('PTTL', KEYS[1]), 'scope'} end
if KEYS[3] then
  local address = tonumber(redis.call('GET', KEYS[3]) or '0')
  if address >= tonumber(ARGV[3]) then return {0, redis.call('PTTL', KEYS[3]), 'address'} end
end
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if KEYS[3] then
  local m = redis.call('INCR', KEYS[3])
  if m == 1 or redis.call('PTTL', KEYS[3]) < 0 then redis.call('PEXPIRE', KEYS[3], ARGV[4]) end
end
return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
`);

/** KEYS = counters; each one above zero gives one attempt back (its window and expiry unchanged). */
const GIVE_BACK = script(`
for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`);

/** KEYS[1] = counter; ARGV[1] = window (ms). A fixed window opened by the first failure. */
const COUNT_IN_WINDOW = script(`
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`);

/**
 * KEYS[1] = the username's next free turn (ms); ARGV = now, turn (ms), max wait (ms).
 * Returns the wait before this attempt's turn, or -1 (nothing reserved) when it is too far away.
 */
const TAKE_TURN = script(`
local now = tonumber(ARGV[1])
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now, nextFree)
if start - now > tonumber(ARGV[3]) then return -1 end
local after = start + tonumber(ARGV[2])
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', after - now + 1000)
return start - now
`);
