import type { Redis } from 'ioredis';
import { luaScript, runLua } from '../inspect/script';

/**
 * A backup of one node and its restore in place, while the node runs (scenario 12).
 *
 * How, and why this way: a restore in place can come from a side redis-server loaded from the
 * backup (REPLICAOF it, then REPLICAOF NO ONE), from DEBUG RELOAD of an older dump, or from a
 * backup loaded into a spare database and swapped in (SWAPDB). The sandbox's nodes run without
 * `--enable-debug-command` (Redis's default; it cannot be changed at run time), so DEBUG RELOAD is
 * out. A side server would be a redis-server process the console's server spawns next to the
 * supervisor's (which owns every node process, so that a reload or a crash of the console never
 * orphans one), and a full sync replaces everything the node holds — the console's own data on the
 * sandbox masters too: audit entries, revoked sessions, login throttling. SWAPDB works on every
 * node as it runs, and lets the engine keep the rollback to this run's keys:
 *
 * - the backup copies the run's keys into the node's spare database (COPY … DB n): a backup of
 *   the node as far as this run is concerned, taken at that moment;
 * - the restore, one script (atomic): copy everything else the live database holds into the spare
 *   one (so nobody else's data goes back in time), SWAPDB live spare, then empty the spare database
 *   (which now holds the node's data from just before the restore).
 *
 * The SWAPDB is what the lock core can see: the node's redis-server process counts it among its
 * data-replacing commands (INFO commandstats), whatever its keys. So every prefix's clients see it
 * at their next check of that node — the console's own lock core too, which then keeps the node
 * out for one of its lease ceilings, as after any rollback.
 *
 * The spare database must be empty or hold only this run's keys: the scripts refuse otherwise.
 */

/** Most keys the restore copies in one script (it blocks the node meanwhile: ~1 µs a key). */
export const RESTORE_MAX_KEYS = 250_000;

/**
 * Copy the run's keys from the live database into the spare one, replacing an earlier backup.
 * ARGV[1] key prefix, ARGV[2] its glob pattern (prefix escaped, then *), ARGV[3] live db, ARGV[4] spare db
 * Reply: the number of keys backed up; an error when the spare database holds anyone else's keys
 */
const BACKUP_SCRIPT = luaScript(`
local live, spare = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('SELECT', spare)
local mine = redis.call('KEYS', ARGV[2])
if redis.call('DBSIZE') ~= #mine then
  return redis.error_reply('SPARE database ' .. spare .. ' holds keys that are not this run\\'s: the backup goes nowhere else')
end
for _, key in ipairs(mine) do redis.call('DEL', key) end
redis.call('SELECT', live)
local n = 0
for _, key in ipairs(redis.call('KEYS', ARGV[2])) do
  if redis.call('COPY', key, key, 'DB', spare, 'REPLACE') == 1 then n = n + 1 end
end
return n`);

/**
 * Restore the backup in place: the live database becomes the backup of the run's keys plus a
 * copy of everything else it holds, by SWAPDB; the spare database is emptied.
 * ARGV[1] key prefix, ARGV[2] its glob pattern, ARGV[3] live db, ARGV[4] spare db, ARGV[5] most keys
 * Reply: {keys restored, other keys kept, the run's keys that were lost (names without the prefix)}
 */
const RESTORE_SCRIPT = luaScript(`
local prefix = ARGV[1]
local live, spare = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('SELECT', spare)
local backup = redis.call('KEYS', ARGV[2])
if redis.call('DBSIZE') ~= #backup then
  return redis.error_reply('SPARE database ' .. spare .. ' holds keys that are not this run\\'s: no restore')
end
if #backup == 0 then return redis.error_reply('NOBACKUP no backup of this run in database ' .. spare) end
local kept = {}
for _, key in ipairs(backup) do kept[key] = true end
redis.call('SELECT', live)
if redis.call('DBSIZE') > tonumber(ARGV[5]) then
  return redis.error_reply('TOOBIG the node holds more than ' .. ARGV[5] .. ' keys: the restore would block it too long')
end
local copied, lost = 0, {}
for _, key in ipairs(redis.call('KEYS', '*')) do
  if string.sub(key, 1, #prefix) == prefix then
    if not kept[key] then lost[#lost + 1] = string.sub(key, #prefix + 1) end
  elseif redis.call('COPY', key, key, 'DB', spare) == 1 then
    copied = copied + 1
  end
end
redis.call('SWAPDB', live, spare)
redis.call('SELECT', spare)
redis.call('FLUSHDB')
redis.call('SELECT', live)
return {#backup, copied, lost}`);

/**
 * Delete the run's keys from the spare database (a backup never restored: the run was cancelled).
 * ARGV[1] glob pattern, ARGV[2] spare db.  Reply: the number deleted
 */
const DROP_SCRIPT = luaScript(`
redis.call('SELECT', tonumber(ARGV[2]))
local n = 0
for _, key in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('DEL', key) end
return n`);

export function globPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
}

/** The database a direct connection works in, and the spare one next to it. */
export function databasesOf(client: Redis): { live: number; spare: number } {
  const live = client.options.db ?? 0;
  return { live, spare: live + 1 };
}

/** Back the run's keys up into the spare database; the number of keys. */
export async function backUp(client: Redis, prefix: string): Promise<number> {
  const { live, spare } = databasesOf(client);
  return Number(await runLua(client, BACKUP_SCRIPT, [], [prefix, globPattern(prefix), live, spare]));
}

export interface RestoreOutcome {
  /** The run's keys brought back from the backup. */
  restored: number;
  /** The other keys of the live database, copied across the swap unchanged. */
  kept: number;
  /** The run's keys the node held before the restore and not in the backup (names after the prefix). */
  lost: string[];
}

/** Restore the backup in place (SWAPDB). */
export async function restoreInPlace(client: Redis, prefix: string, maxKeys = RESTORE_MAX_KEYS): Promise<RestoreOutcome> {
  const { live, spare } = databasesOf(client);
  const reply = (await runLua(client, RESTORE_SCRIPT, [], [prefix, globPattern(prefix), live, spare, maxKeys])) as [
    number,
    number,
    unknown,
  ];
  const lost = Array.isArray(reply[2]) ? reply[2].map(String).sort() : [];
  return { restored: Number(reply[0]), kept: Number(reply[1]), lost };
}

/** Delete a backup left in the spare database; the number of keys deleted. */
export async function dropBackup(client: Redis, prefix: string): Promise<number> {
  const { spare } = databasesOf(client);
  return Number(await runLua(client, DROP_SCRIPT, [], [globPattern(prefix), spare]));
}
