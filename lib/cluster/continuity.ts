import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis, ReplyError } from 'ioredis';
import { adoptGracefulRestart, EPOCH_FIELDS, serverRunId } from '@redlock-console/redlock';
import { epochKey } from '@redlock-console/redlock';
import type { Persistence } from './persistence';

/**
 * Continuity across a graceful stop. The lock core quarantines a node whose redis-server process
 * changed (a restart may have reloaded older data: an RDB snapshot, an AOF from before a period
 * without persistence), which is right after a crash but needless after a stop that lost nothing.
 * The supervisor alone knows a stop was graceful, so it leaves a marker in the node's data
 * directory (`continuity.json`) when, and only when:
 * - the node ran with a persistence that keeps its data ('rdb', 'aof-everysec', 'aof-always');
 * - it was asked to SHUTDOWN with that persistence flushed (SHUTDOWN SAVE for 'rdb'; SHUTDOWN,
 *   which fsyncs the AOF, for the AOF modes), after its run_id and sentinel were read;
 * - and the process exited with code 0 (Redis refuses to exit when the save fails; a SIGKILL
 *   after the stop timeout is a crash).
 * The next start of the node consumes the marker whatever happens (read and deleted before the
 * process is spawned), and only when it starts with the same persistence and the same key prefix
 * does it ask the node to adopt the restart (scripts/adopt-restart.lua: a compare-and-set on the
 * stopped process's run_id). A crash deletes any marker: it is never graceful.
 */
export const CONTINUITY_FILE = 'continuity.json';

export interface ContinuityMarker {
  version: 1;
  /** run_id of the process that was stopped gracefully. */
  runId: string;
  persistence: Persistence;
  /** The key prefix whose sentinel was read. */
  keyPrefix: string;
  /** quarantineUntil of that sentinel when the node was stopped (0: none). */
  quarantineUntil: number;
  /** Local clock (ms) of the stop. */
  stoppedAt: number;
}

export type ContinuityCode = 'adopted' | 'no-marker' | 'persistence-changed' | 'prefix-changed' | 'no-sentinel' | 'changed' | 'error';

/** What the supervisor did about a node's restart (NodeStatus.continuity, the 'continuity' event). */
export interface ContinuityOutcome {
  /** The node keeps its sentinel (no restart quarantine). */
  adopted: boolean;
  code: ContinuityCode;
  /** One plain sentence: what happened and what it means for the node's vote. */
  reason: string;
  /** The process that started, and the one stopped gracefully before it (when known). */
  runId: string | null;
  previousRunId: string | null;
  /** Local clock (ms). */
  at: number;
}

const markerPath = (dataDir: string) => join(dataDir, CONTINUITY_FILE);

export function writeMarker(dataDir: string, marker: ContinuityMarker): void {
  writeFileSync(markerPath(dataDir), `${JSON.stringify(marker)}\n`, { mode: 0o600 });
}

export function deleteMarker(dataDir: string): void {
  rmSync(markerPath(dataDir), { force: true });
}

/** Read and delete the marker (consumed once, whatever the start does next); null when there is none or it is unreadable. */
export function takeMarker(dataDir: string): ContinuityMarker | null {
  let text: string;
  try {
    text = readFileSync(markerPath(dataDir), 'utf8');
  } catch {
    return null;
  } finally {
    deleteMarker(dataDir);
  }
  try {
    const m = JSON.parse(text) as Partial<ContinuityMarker>;
    if (
      m.version !== 1 ||
      typeof m.runId !== 'string' ||
      !/^[0-9a-f]+$/.test(m.runId) ||
      typeof m.persistence !== 'string' ||
      typeof m.keyPrefix !== 'string' ||
      typeof m.quarantineUntil !== 'number'
    )
      return null;
    return m as ContinuityMarker;
  } catch {
    return null;
  }
}

/** The persistence modes whose data a graceful stop keeps. */
export function keepsData(mode: Persistence): boolean {
  return mode !== 'none';
}

/** Where a redis-server process listens, and the password it requires (null: none). */
export interface DirectAddress {
  host: string;
  port: number;
  password: string | null;
}

/** A short client straight to the redis-server process (never through its fault proxy). */
function directClient({ host, port, password }: DirectAddress): Redis {
  const client = new Redis({
    host,
    port,
    ...(password !== null ? { password } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => undefined);
  return client;
}

/** What the supervisor read from a node just before asking it to shut down. */
export interface StoppedIncarnation {
  runId: string;
  quarantineUntil: number;
}

/**
 * Read the process's run_id and the sentinel's quarantineUntil, then SHUTDOWN with the persistence
 * flushed. Resolves once Redis accepted the SHUTDOWN (it closes the connection); rejects when it
 * refused (e.g. the final save failed: the process keeps running) or could not be reached.
 */
export async function readAndShutdown(address: DirectAddress, persistence: Persistence, keyPrefix: string): Promise<StoppedIncarnation> {
  const client = directClient(address);
  try {
    await client.connect();
    const runId = await serverRunId(client);
    const quarantineUntil = Number((await client.hget(epochKey(keyPrefix), EPOCH_FIELDS.quarantineUntil)) ?? 0) || 0;
    try {
      await client.call('SHUTDOWN', ...(persistence === 'rdb' ? ['SAVE'] : []));
    } catch (err) {
      if (err instanceof ReplyError) throw err; // refused: it did not shut down
      // The connection closed under the command: the server is exiting.
    }
    return { runId, quarantineUntil };
  } finally {
    client.disconnect();
  }
}

/** Decide, and when the marker allows it apply, continuity for a node that has just started. */
export async function adoptAfterStart(
  address: DirectAddress,
  marker: ContinuityMarker | null,
  options: { persistence: Persistence; keyPrefix: string; lastExit: string },
): Promise<ContinuityOutcome> {
  const at = Date.now();
  const client = directClient(address);
  try {
    await client.connect();
    const runId = await serverRunId(client).catch(() => null);
    const no = (code: ContinuityCode, reason: string): ContinuityOutcome => ({
      adopted: false,
      code,
      reason: `not adopted: ${reason}`,
      runId,
      previousRunId: marker?.runId ?? null,
      at,
    });
    if (!marker) {
      return no(
        'no-marker',
        options.persistence === 'none'
          ? 'it started without persistence and holds nothing: the lock core quarantines it for maxTtlMs'
          : `no graceful stop with its data flushed was recorded (last exit: ${options.lastExit}), so the lock core treats it as a restart that may have lost data: it sits out maxTtlMs`,
      );
    }
    if (marker.persistence !== options.persistence) {
      return no(
        'persistence-changed',
        options.persistence === 'none'
          ? `stopped with ${marker.persistence}, started without persistence: it holds nothing, and the lock core quarantines it for maxTtlMs`
          : `stopped with ${marker.persistence}, started with ${options.persistence}: what it loaded is not what it held, so it sits out maxTtlMs as a restart`,
      );
    }
    if (marker.keyPrefix !== options.keyPrefix) {
      return no('prefix-changed', `its graceful stop was recorded for key prefix ${marker.keyPrefix}, not ${options.keyPrefix}`);
    }
    const result = await adoptGracefulRestart(client, {
      keyPrefix: options.keyPrefix,
      previousRunId: marker.runId,
      origin: `graceful restart adopted by the supervisor (${options.persistence})`,
      previousQuarantineUntil: marker.quarantineUntil,
    });
    if (result.adopted) {
      return {
        adopted: true,
        code: 'adopted',
        reason: `adopted: stopped gracefully with ${marker.persistence} and started unchanged, so it lost nothing and votes at once`,
        runId,
        previousRunId: marker.runId,
        at,
      };
    }
    return result.reason === 'no-sentinel'
      ? no('no-sentinel', 'it has no epoch sentinel (its data was lost or never marked): the lock core quarantines it')
      : no('changed', 'its sentinel no longer speaks for the process that was stopped: the lock core decides from the sentinel');
  } catch (err) {
    return {
      adopted: false,
      code: 'error',
      reason: `not adopted: ${(err as Error).message}`,
      runId: null,
      previousRunId: marker?.runId ?? null,
      at,
    };
  } finally {
    client.disconnect();
  }
}

/** Log lines for what a start did about the nodes' restarts: one for those adopted, one per node that was not. */
export function continuityLines(nodes: ReadonlyArray<{ id: number; continuity: ContinuityOutcome | null }>): string[] {
  const adopted = nodes.filter((n) => n.continuity?.adopted).map((n) => n.id);
  const lines: string[] = [];
  if (adopted.length > 0) {
    lines.push(
      `graceful restart adopted on node${adopted.length > 1 ? 's' : ''} ${adopted.join(', ')}: stopped with their data flushed, they vote at once`,
    );
  }
  for (const n of nodes) if (n.continuity && !n.continuity.adopted) lines.push(`node ${n.id}: restart ${n.continuity.reason}`);
  return lines;
}
