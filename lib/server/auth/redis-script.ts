import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script sent by its SHA-1 (EVALSHA), its text only when the master does not have it yet. */
export interface Script {
  text: string;
  sha: string;
}

export function script(text: string): Script {
  return { text, sha: createHash('sha1').update(text).digest('hex') };
}

/**
 * Run `s` with `keys` and `args`. Per call this sends the 40-character SHA, not the script: a
 * flood of logins (each one a few scripts on every master) paid for writing ~1 KB of Lua per
 * call to five sockets (a CPU profile of the console under 50 logins/s). A master that
 * has not seen the script (NOSCRIPT: restarted, or SCRIPT FLUSH) gets the text once.
 */
export async function runScript(client: Redis, s: Script, keys: readonly string[], args: readonly string[]): Promise<unknown> {
  try {
    return await client.evalsha(s.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(s.text, keys.length, ...keys, ...args);
  }
}
