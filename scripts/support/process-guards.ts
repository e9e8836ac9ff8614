import { describeFatal } from './fatal';

export interface ProcessGuards {
  /** Graceful: stop the console, the control channel and the nodes, in that order. */
  shutdown(): Promise<void>;
  /** Immediate: SIGKILL every child now (no awaiting possible). */
  killSync(): void;
}

/**
 * One policy for every entry point that owns redis-server processes:
 * - SIGINT / SIGTERM: graceful shutdown, exit 0; a second SIGINT kills at once (exit 130);
 * - an uncaught exception or unhandled rejection: print it, SIGKILL the children, exit 1.
 * (A SIGKILL of this process is covered by the supervisor's lifeline watchdog.)
 */
export function installProcessGuards(
  guards: ProcessGuards,
  log: (line: string) => void = console.log,
): { stop(code: number): Promise<void> } {
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    try {
      await guards.shutdown();
    } finally {
      process.exit(code);
    }
  };
  process.on('SIGINT', () => {
    if (stopping) {
      guards.killSync();
      process.exit(130);
    }
    void stop(0);
  });
  process.on('SIGTERM', () => void stop(0));
  const fatal = (err: unknown) => {
    console.error(describeFatal(err));
    guards.killSync();
    process.exit(1);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  return { stop };
}
