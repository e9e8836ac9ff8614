/**
 * Types of node-redlock 5.0.0-beta.2 as the bench uses them. The package ships its typings at
 * dist/index.d.ts but its "exports" map does not point at them, so TypeScript (bundler resolution)
 * cannot find them; this declares the part we call.
 */
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';
  import type { Redis } from 'ioredis';

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }

  export class Lock {
    readonly resources: string[];
    readonly value: string;
    expiration: number;
    release(): Promise<unknown>;
    extend(duration: number): Promise<Lock>;
  }

  export default class Redlock extends EventEmitter {
    /** `scripts`: functions that get each default Lua script and return the one to use. */
    constructor(
      clients: Iterable<Redis>,
      settings?: Partial<Settings>,
      scripts?: {
        acquireScript?: (script: string) => string;
        extendScript?: (script: string) => string;
        releaseScript?: (script: string) => string;
      },
    );
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    release(lock: Lock, settings?: Partial<Settings>): Promise<unknown>;
    quit(): Promise<void>;
  }
}
