import { vi } from 'vitest';
import type { Redis } from 'ioredis';

/**
 * A console "process" inside the test process: every singleton the server keeps on globalThis
 * (runtime, auth, lock core, events…), under `Symbol.for('redlock-console.*')`. Taking them away
 * and re-importing the modules is what a restart of the console does (same masters, same data dir,
 * nothing in memory); keeping two sets and swapping them is two console processes behind one load
 * balancer.
 */
export type ConsoleState = Map<symbol, unknown>;

function isConsoleKey(key: symbol): boolean {
  return Symbol.keyFor(key)?.startsWith('redlock-console.') ?? false;
}

/** Take the current console's singletons off globalThis (a fresh console starts on the next call). */
export function detachConsole(): ConsoleState {
  const g = globalThis as unknown as Record<symbol, unknown>;
  const state: ConsoleState = new Map();
  for (const key of Object.getOwnPropertySymbols(g).filter(isConsoleKey)) {
    state.set(key, g[key]);
    delete g[key];
  }
  vi.resetModules();
  return state;
}

/** Make `state` the current console again (after detachConsole() of the other one). */
export function attachConsole(state: ConsoleState): void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(g).filter(isConsoleKey)) delete g[key];
  for (const [key, value] of state) g[key] = value;
  vi.resetModules();
}

/** Close the Redis connections of a detached console (what its process exit would do). */
export function closeConsole(state: ConsoleState): void {
  const runtime = state.get(Symbol.for('redlock-console.runtime')) as { clients: Redis[] } | undefined;
  for (const c of runtime?.clients ?? []) c.disconnect();
}

/** Stop the current console and start a fresh one against the same masters and data dir. */
export function restartConsole(): void {
  closeConsole(detachConsole());
}
