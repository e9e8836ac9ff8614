import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureOperatorLogin } from '../../config/credentials';
import { digestSecret, hashPassword, sameDigest, verifyPassword } from './passwords';

const usersFileSchema = z.strictObject({
  users: z
    .array(
      z
        .strictObject({
          username: z.string().min(1).max(128),
          role: z.enum(['viewer', 'operator']),
          password: z.string().min(12).optional(),
          passwordHash: z.string().startsWith('scrypt$').optional(),
        })
        .refine((u) => Boolean(u.password) !== Boolean(u.passwordHash), 'give exactly one of password or passwordHash'),
    )
    .default([]),
  apiKeys: z.array(z.strictObject({ name: z.string().min(1).max(128), key: z.string().min(24) })).default([]),
});

interface User {
  username: string;
  role: 'viewer' | 'operator';
  hash: string;
  stamp: string;
}
interface ApiKey {
  name: string;
  digest: Buffer;
}

/**
 * Users, API keys and the metrics scrape token, from configuration:
 * - the operator login (REDLOCK_ADMIN_USER/PASSWORD, or generated under the data dir);
 * - REDLOCK_VIEWER_USER / REDLOCK_VIEWER_PASSWORD: an optional read-only login;
 * - REDLOCK_API_KEYS: `name=key,name=key` for programs using the lock service (keys ≥ 24 chars);
 * - REDLOCK_METRICS_TOKEN: bearer token for Prometheus scrapes;
 * - `<dataDir>/users.json`: `{ users: [{username, role, password | passwordHash}], apiKeys: [{name, key}] }`.
 */
export class Accounts {
  private constructor(
    private readonly users: Map<string, User>,
    private readonly apiKeys: ApiKey[],
    private readonly metricsToken: Buffer | null,
    private readonly dummyHash: string,
  ) {}

  /**
   * `stampKey` keys each user's credential stamp: a short HMAC of the password (or of the stored
   * hash) that sessions carry, so changing a password ends the sessions signed in with the old one,
   * across restarts; keyed, so a stolen cookie gives nothing to guess the password against.
   */
  static async load(env: Record<string, string | undefined>, dataDir: string, stampKey: Uint8Array): Promise<Accounts> {
    const users = new Map<string, User>();
    const stamp = (kind: string, secret: string) =>
      createHmac('sha256', stampKey).update(`${kind}\0${secret}`).digest('base64url').slice(0, 16);
    const add = async (username: string, role: User['role'], password: string) =>
      users.set(username, { username, role, hash: await hashPassword(password), stamp: stamp('password', password) });
    const operator = ensureOperatorLogin(dataDir, {
      user: env.REDLOCK_ADMIN_USER?.trim() || null,
      password: env.REDLOCK_ADMIN_PASSWORD || null,
    });
    await add(operator.username, 'operator', operator.password);
    if (env.REDLOCK_VIEWER_USER && env.REDLOCK_VIEWER_PASSWORD) await add(env.REDLOCK_VIEWER_USER, 'viewer', env.REDLOCK_VIEWER_PASSWORD);
    const apiKeys: ApiKey[] = [];
    for (const pair of (env.REDLOCK_API_KEYS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const key = pair.slice(eq + 1);
      if (eq < 1 || key.length < 24) throw new Error('REDLOCK_API_KEYS must be name=key pairs with keys of at least 24 characters');
      apiKeys.push({ name, digest: digestSecret(key) });
    }
    let file: z.infer<typeof usersFileSchema> | null = null;
    try {
      file = usersFileSchema.parse(JSON.parse(readFileSync(join(dataDir, 'users.json'), 'utf8')));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`${join(dataDir, 'users.json')} is invalid: ${(err as Error).message}`);
    }
    for (const u of file?.users ?? []) {
      if (u.passwordHash)
        users.set(u.username, { username: u.username, role: u.role, hash: u.passwordHash, stamp: stamp('hash', u.passwordHash) });
      else await add(u.username, u.role, u.password!);
    }
    for (const k of file?.apiKeys ?? []) apiKeys.push({ name: k.name, digest: digestSecret(k.key) });
    const metricsToken = env.REDLOCK_METRICS_TOKEN ? digestSecret(env.REDLOCK_METRICS_TOKEN) : null;
    return new Accounts(users, apiKeys, metricsToken, await hashPassword('not-a-user-password'));
  }

  /** The user on a correct password, else null; an unknown user costs the same scrypt work. */
  async verifyLogin(username: string, password: string): Promise<Pick<User, 'username' | 'role' | 'stamp'> | null> {
    const user = this.users.get(username);
    const ok = await verifyPassword(password, user?.hash ?? this.dummyHash);
    return ok && user ? { username: user.username, role: user.role, stamp: user.stamp } : null;
  }

  apiKey(key: string): string | null {
    const digest = digestSecret(key);
    let found: string | null = null;
    for (const k of this.apiKeys) if (sameDigest(k.digest, digest)) found = k.name; // no early exit: constant work
    return found;
  }

  /** The configured API keys' names (never the keys): the console's quota table lists each. */
  apiKeyNames(): string[] {
    return [...new Set(this.apiKeys.map((k) => k.name))];
  }

  isMetricsToken(token: string): boolean {
    return this.metricsToken !== null && sameDigest(this.metricsToken, digestSecret(token));
  }

  roleOf(username: string): User['role'] | null {
    return this.users.get(username)?.role ?? null;
  }

  /** The user's current credential stamp (null for an unknown user). */
  stampOf(username: string): string | null {
    return this.users.get(username)?.stamp ?? null;
  }
}
