import 'server-only';

/** The lock history (issue 19): written in batches by the lock service and force-release, read per resource. */
export { flushLockHistory, historyCopies, recordLockHistory, tokenFingerprint } from './writer';
export { holdsOf, readLockHistory, readLockServiceLog } from './reader';
