import styles from './nodes.module.css';

/**
 * What the Nodes screen tells this user before the rows: a viewer can only watch; external masters
 * take no process or network action; another console drives the sandbox's node actions.
 */
export function NodesNotices({
  role,
  sandbox,
  drivenBy,
}: {
  /** The signed-in role, or null before it is known. */
  role: string | null;
  sandbox: boolean;
  /** Another console that drives the supervisor's actions, or null. */
  drivenBy: string | null;
}) {
  if (role === null) return null;
  const operator = role === 'operator';
  return (
    <>
      {!operator ? (
        <div className={`callout ${styles.notice} ${styles.callInfo}`} data-testid="viewer-notice" role="note">
          <span className={styles.noticeIcon} aria-hidden="true">
            i
          </span>
          <div>
            <strong>You are signed in as a {role}.</strong>You can watch every node here; crashing, partitioning or marking nodes clean
            needs the operator role (the server refuses it anyway).
          </div>
        </div>
      ) : null}
      {!sandbox ? (
        <div className={`callout callout-warn ${styles.notice}`} data-testid="external-notice" role="note">
          <span className={`${styles.noticeIcon} ${styles.noticeIconWarn}`} aria-hidden="true">
            !
          </span>
          <div>
            <strong>External masters: process and network actions are unavailable.</strong>This console does not own these Redis processes
            or their network, so it will not crash, stop, restart, pause, partition or slow them. Marking a quarantined node clean still
            works: it only writes the node&apos;s epoch sentinel.
          </div>
        </div>
      ) : null}
      {operator && drivenBy !== null ? (
        <div className={`callout ${styles.notice} ${styles.callInfo}`} data-testid="driven-elsewhere-notice" role="note">
          <span className={styles.noticeIcon} aria-hidden="true">
            i
          </span>
          <div>
            <strong>Node actions run through console {drivenBy}.</strong>One console at a time drives the sandbox&apos;s processes and
            network, so that no two change node states under each other; open that console to crash, restart or partition a node. Marking a
            quarantined node clean works here.
          </div>
        </div>
      ) : null}
    </>
  );
}
