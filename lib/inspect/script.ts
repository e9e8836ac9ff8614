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
 * (a restarted node, SCRIPT FLUSH). For scripts that write; readLua() for those that only read.
 */
export async function runLua(
  client: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('NOSCRIPT')) return client.eval(script.source, keys.length, ...keys, ...args);
    throw err;
  }
}

/** Clients whose server answered EVALSHA_RO with "unknown command" (Redis < 7): runLua from then on. */
const withoutReadOnlyEval = new WeakSet<Redis>();

/**
 * Run a script that only reads: EVALSHA_RO, falling back to EVAL_RO on NOSCRIPT, as runLua does.
 * Redis refuses a write from it.
 *
 * Read-only on purpose: a plain EVAL counts as a write, so CLIENT PAUSE WRITE, which a failover
 * (FAILOVER, Sentinel, a managed service's switch-over) puts on a master for its duration, holds
 * it until the pause ends, and the console would stop seeing that node's locks exactly during the
 * incident an operator opened it for. EVALSHA_RO runs through the pause, and on read-only
 * replicas. A server without it (Redis 6) gets runLua, as before.
 */
export async function readLua(
  client: Redis,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  if (withoutReadOnlyEval.has(client)) return runLua(client, script, keys, args);
  try {
    return await client.evalsha_ro(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    if (/unknown command/i.test(err.message)) {
      withoutReadOnlyEval.add(client);
      return runLua(client, script, keys, args);
    }
    if (err.message.startsWith('NOSCRIPT')) return client.eval_ro(script.source, keys.length, ...keys, ...args);
    throw err;
  }
}
