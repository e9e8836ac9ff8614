import { vi } from 'vitest';
import type { Redis } from 'ioredis';

/**
 * Console "processes" inside the test process, each a module graph of its own. A console's state
 * (runtime, auth, lock core, events…) is its modules' state, as in the console's process, which
 * loads lib/server once. So a console here is one evaluation of lib/server: the in-process front
 * server (the routes answered on Node's objects) and the route handlers, all imported from one
 * module registry. `vi.resetModules()` starts the next console's graph; the one before keeps
 * running on the module instances it holds (its front server and every route module, all loaded
 * before the reset), as another process behind the same load balancer would.
 *
 * The harness (test/support/api.ts) calls its consoles through `currentConsole()`. A test that
 * imports lib/server itself (`await import('../../lib/server/…')`) gets the current console's
 * module only while that console is the newest graph: after attachConsole() of an older one it
 * would get another console's; restartConsole() makes a fresh, newest one.
 */
export interface ConsoleParts<Route> {
  /** The front server of the routes answered on Node's objects, imported from the current registry. */
  startFront(): Promise<{ close(): Promise<void> }>;
  /** The route files by name, each imported from the current registry when called. */
  routes: Record<string, () => Promise<Route>>;
}

type RuntimeModule = { getRuntime(): { clients: Redis[] } };

export class InProcessConsole<Route = unknown> {
  private front: Promise<{ close(): Promise<void> }> | null = null;
  private readonly routeModules = new Map<string, Promise<Route>>();
  private readonly runtime: Promise<RuntimeModule>;
  /** Every module it needs is loaded: it no longer imports from the registry, which is another console's now. */
  private frozen = false;
  private used = false;
  closed = false;

  constructor(private readonly parts: ConsoleParts<Route>) {
    this.runtime = import('../../lib/server/runtime');
  }

  frontServer<F extends { close(): Promise<void> }>(): Promise<F> {
    if (this.closed) throw new Error('this console was closed');
    if (!this.front && this.frozen) throw new Error('a frozen console has no front server');
    this.used = true;
    this.front ??= this.parts.startFront();
    return this.front as Promise<F>;
  }

  route(file: string): Promise<Route> {
    if (this.closed) throw new Error('this console was closed');
    this.used = true;
    let mod = this.routeModules.get(file);
    if (!mod) {
      if (this.frozen) throw new Error(`${file} was not loaded before this console was detached`);
      mod = this.parts.routes[file]!();
      this.routeModules.set(file, mod);
    }
    return mod;
  }

  /** Load everything it may still need from the registry, before another console's graph replaces it there. */
  async freeze(): Promise<void> {
    if (this.frozen) return;
    await Promise.all([this.frontServer(), ...Object.keys(this.parts.routes).map((f) => this.route(f))]);
    this.frozen = true;
  }

  /** What its process exit would do: its front server's sockets and its runtime's connections closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.front) await (await this.front).close();
    if (this.used) for (const c of (await this.runtime).getRuntime().clients) c.disconnect();
  }
}

let parts: ConsoleParts<unknown> | null = null;
let current: InProcessConsole | null = null;
const open = new Set<InProcessConsole>();

function fresh(): InProcessConsole {
  vi.resetModules();
  const c = new InProcessConsole(parts!);
  open.add(c);
  return c;
}

/** The harness's first console, on the registry the test file was loaded with (startApi, once per file). */
export function startConsoles<Route>(p: ConsoleParts<Route>): InProcessConsole<Route> {
  parts = p as ConsoleParts<unknown>;
  current = new InProcessConsole(parts);
  open.add(current);
  return current as InProcessConsole<Route>;
}

/** The console the harness's calls go to. */
export function currentConsole<Route>(): InProcessConsole<Route> {
  if (!current) throw new Error('no console: startApi() first');
  return current as InProcessConsole<Route>;
}

/** Keep the current console running apart and make a fresh one current (a second process starts). */
export async function detachConsole(): Promise<InProcessConsole> {
  const before = currentConsole();
  await before.freeze();
  current = fresh();
  return before;
}

/** Make `console` current again (after detachConsole()); the fresh console it replaces is closed. */
export async function attachConsole(console: InProcessConsole): Promise<void> {
  if (console.closed) throw new Error('that console was closed');
  const replaced = currentConsole();
  current = console;
  await closeConsole(replaced);
}

/** Close a console (what its process exit would do). */
export async function closeConsole(console: InProcessConsole): Promise<void> {
  open.delete(console);
  await console.close();
}

/** Stop the current console and start a fresh one against the same masters and data dir. */
export async function restartConsole(): Promise<void> {
  const before = currentConsole();
  current = fresh();
  await closeConsole(before);
}

/** Close every console still open (the harness's stop). */
export async function closeConsoles(): Promise<void> {
  for (const c of [...open]) await closeConsole(c);
  current = null;
}
