import 'server-only';
import { randomUUID } from 'node:crypto';
import { CONFIG_DEFAULTS, instanceOf } from '../config/env';

let name: string | undefined;

/**
 * This console process's name among the replicas on one set of masters (REDLOCK_INSTANCE, else
 * `<hostname>:<PORT>`): the metrics' `replica` label, a lease's owner, an event's or a quota
 * report's origin. Read once.
 */
export function instanceName(): string {
  if (name !== undefined) return name;
  const port = Number(process.env.PORT) || CONFIG_DEFAULTS.port;
  try {
    name = instanceOf(process.env, port);
  } catch {
    // loadConfig refuses the start with the same message; a name is still needed to say so.
    name = `console:${port}`;
  }
  return name;
}

let key: string | undefined;

/**
 * This process among the others, whatever their names: the instance name and a random part. Two
 * processes given the same name (a lock-service process beside a console on one PORT, a copy
 * started twice) must still not take each other's quota reports or events for their own.
 */
export function processKey(): string {
  return (key ??= `${instanceName()}#${randomUUID().slice(0, 8)}`);
}
