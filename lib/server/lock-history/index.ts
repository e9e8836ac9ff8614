import 'server-only';

/** The lock history: written in batches by the lock service and force-release, read per resource. */
export {
  flushLockHistory,
  historyCopies,
  LOCK_HISTORY_RETENTION,
  recordLockHistory,
  tokenFingerprint,
  writeLockHistoryNow,
} from './writer';
export { FORCE_RELEASE_INCOMPLETE, holderClaims, holdsOf, readLockHistory, readLockServiceLog } from './reader';
