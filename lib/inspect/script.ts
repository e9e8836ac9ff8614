import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script run by SHA, with its source for the NOSCRIPT fallback. */
export interface LuaScript {
  source: string;
  /** SHA1 of the source, as EVALSHA wants it. */
  sha: string;
}

/** A Lua script and its SHA. */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * EVALSHA, falling back to EVAL (which also caches the script) when the node answers NOSCRIPT
 * (a restarted node, SCRIPT FLUSH).
 */
export async function runLua(client: Redis, script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return client.eval(script.source, keys.length, ...keys, ...args);
    throw err;
  }
}
