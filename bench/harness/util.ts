import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type Bounded<T> =
  { ok: true; value: T; ms: number } | { ok: false; error: unknown; ms: number } | { ok: false; hung: true; ms: number };

/**
 * Run `start()` and wait for it at most `limitMs`: every peer call in the degraded workloads goes
 * through this, so a library that never answers is reported as hanging instead of hanging the
 * bench. The call itself is not cancelled (the peers have no way to): it settles on its own later.
 */
export function bounded<T>(start: () => Promise<T>, limitMs: number): Promise<Bounded<T>> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      resolve({ ok: false, hung: true, ms: performance.now() - t0 });
    }, limitMs);
    let promise: Promise<T>;
    try {
      promise = start();
    } catch (err) {
      promise = Promise.reject(err);
    }
    promise.then(
      (value) => {
        if (settled) return;
        clearTimeout(timer);
        resolve({ ok: true, value, ms: performance.now() - t0 });
      },
      (error: unknown) => {
        if (settled) return;
        clearTimeout(timer);
        resolve({ ok: false, error, ms: performance.now() - t0 });
      },
    );
  });
}

let gcFn: (() => void) | null | undefined;

/** A full garbage collection, when V8 lets us have one (it does, via --expose-gc set at run time). */
export function collectGarbage(): void {
  if (gcFn === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    } catch {
      gcFn = null;
    }
  }
  gcFn?.();
}

/** Megabytes, one decimal. */
export function mb(bytes: number): number {
  return Math.round((bytes / 1_048_576) * 10) / 10;
}

/** The error's name and first line, for reports. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split('\n')[0]}`;
  return String(err);
}

/** The value after `--<name>` on the command line, or `fallback` (the profile scripts' options). */
export function argValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** Run a script's `main` and exit: 0, or 1 with the error printed. */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
