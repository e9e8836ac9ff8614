import type { NodeView, NodesResponse } from '@/lib/api/nodes';
import type { LockHolders } from '@/lib/client/ops-queries';
import { ACTIONS, type ActionKind } from './actions';
import type { BlastRadius } from './blast-radius';
import { ReadAge } from '../ui/clock';
import { restartOutcome, type Persistence } from './restart-outcome';
import styles from './nodes.module.css';

export interface HoldersState {
  data: LockHolders | undefined;
  isPending: boolean;
  error: Error | null;
}

/**
 * What a node action would cost, shown before it is confirmed (action-dialog.tsx): whether new
 * locks can still be granted, and the locks that lose their majority.
 */
export function Impact({
  node,
  cluster,
  kind,
  persistence,
  usableAfter,
  radius,
  holders,
}: {
  node: NodeView;
  cluster: NodesResponse;
  kind: ActionKind;
  persistence: Persistence;
  usableAfter: number;
  radius: BlastRadius | null;
  holders: HoldersState;
}) {
  const spec = ACTIONS[kind];
  const n = cluster.verdict.configuredNodes;
  const q = cluster.quorum;
  let availability: { tone: 'ok' | 'warn' | 'bad'; title: string; text: string };
  if (spec.effect === 'restores') {
    availability = {
      tone: 'ok',
      title: `Node ${node.id} votes again once it answers`,
      text: `Usable now: ${cluster.verdict.usable} of ${n}, quorum ${q}.`,
    };
  } else if (spec.effect === 'slows') {
    availability = {
      tone: 'warn',
      title: `Node ${node.id} keeps its vote, late`,
      text: `Usable stays ${cluster.verdict.usable} of ${n} (quorum ${q}); a vote slower than the per-node timeout counts against.`,
    };
  } else if (usableAfter >= q + 1) {
    availability = {
      tone: 'ok',
      title: 'New locks can still be granted',
      text: `${usableAfter} of ${n} nodes usable afterwards, quorum ${q}: ${usableAfter - q} more can fail.`,
    };
  } else if (usableAfter === q) {
    availability = {
      tone: 'warn',
      title: 'New locks can still be granted — with no margin',
      text: `${usableAfter} of ${n} nodes usable afterwards, exactly the quorum: one more failure stops every new lock.`,
    };
  } else {
    availability = {
      tone: 'bad',
      title: 'New locks cannot be granted',
      text: `Only ${usableAfter} of ${n} nodes usable afterwards, quorum ${q}: every acquire fails until a node returns.`,
    };
  }
  // What it loads, and whether it votes at once (a graceful restart the supervisor adopts) or sits out maxTtl.
  const outcome = kind === 'restart' || kind === 'start' ? restartOutcome(node, kind, persistence, cluster.maxTtlMs) : null;
  const restartLoses = kind === 'restart' && outcome !== null && outcome.keys !== 'kept';

  return (
    <section
      className={styles.impact}
      aria-label="Blast radius"
      data-testid="blast-radius"
      data-state={spec.effect === 'restores' ? 'none' : holders.isPending ? 'loading' : holders.error && !holders.data ? 'error' : 'ready'}
      data-losing={radius ? radius.losing.length : undefined}
    >
      <h3 className={styles.impactTitle}>Blast radius</h3>
      <div className={`${styles.verdictLine} ${styles[availability.tone]}`}>
        <span className={styles.verdictIcon} aria-hidden="true">
          {availability.tone === 'ok' ? '✓' : availability.tone === 'warn' ? '!' : '✕'}
        </span>
        <div>
          <strong>{availability.title}</strong>
          {availability.text}
        </div>
      </div>
      {outcome ? (
        <div
          className={`${styles.verdictLine} ${styles[outcome.tone]}`}
          data-testid="restart-data"
          data-adopted={outcome.adopted ? 'yes' : 'no'}
        >
          <span className={styles.verdictIcon} aria-hidden="true">
            {outcome.tone === 'ok' ? '✓' : '!'}
          </span>
          <div>
            <strong>{outcome.title}</strong>
            {outcome.text}
          </div>
        </div>
      ) : null}
      {spec.effect === 'restores' ? null : holders.isPending ? (
        <div className={styles.verdictLine}>
          <span className={styles.verdictIcon}>…</span>
          <div>Reading every held lock to see which need node {node.id}…</div>
        </div>
      ) : holders.error && !holders.data ? (
        <div className={`${styles.verdictLine} ${styles.warn}`} role="alert">
          <span className={styles.verdictIcon} aria-hidden="true">
            ?
          </span>
          <div>
            <strong>The blast radius is unknown</strong>The locks could not be read ({holders.error.message}). Go ahead only if you know
            what node {node.id} holds.
          </div>
        </div>
      ) : radius ? (
        <LockImpact radius={radius} slows={spec.effect === 'slows'} restartLoses={restartLoses} holders={holders.data!} />
      ) : null}
    </section>
  );
}

function LockImpact({
  radius,
  slows,
  restartLoses,
  holders,
}: {
  radius: BlastRadius;
  slows: boolean;
  restartLoses: boolean;
  holders: LockHolders;
}) {
  const count = radius.losing.length;
  const shown = radius.losing.slice(0, 200);
  const tone = count === 0 ? 'ok' : slows ? 'warn' : 'bad';
  const title =
    count === 0
      ? slows
        ? `No lock depends on node ${radius.target} alone`
        : 'No lock loses its majority'
      : slows
        ? `${count} lock${count === 1 ? '' : 's'} need node ${radius.target} for their majority`
        : `${count} lock${count === 1 ? '' : 's'} would lose ${count === 1 ? 'its' : 'their'} majority`;
  const text =
    count === 0
      ? radius.surviving === 0
        ? `Node ${radius.target} holds no lock that has a majority right now.`
        : `${radius.surviving} lock${radius.surviving === 1 ? '' : 's'} held here keep${radius.surviving === 1 ? 's' : ''} a majority without it.`
      : slows
        ? 'Their extends and releases must wait for this node; if it answers too late they miss their majority.'
        : restartLoses
          ? 'Their holders can no longer count on them: the node comes back empty, so its vote for them is gone for the rest of the lease, and another client can be granted the same resource once the others expire.'
          : 'Their holders still believe they hold them, but fewer than a quorum of reachable nodes agree: an extend fails, and a competing acquire cannot win until a node returns.';
  return (
    <>
      <div className={`${styles.verdictLine} ${styles[tone]}`}>
        <span className={styles.verdictIcon} aria-hidden="true">
          {tone === 'ok' ? '✓' : tone === 'warn' ? '!' : '✕'}
        </span>
        <div>
          <strong data-testid="blast-radius-summary">{title}</strong>
          {text}
        </div>
      </div>
      {count > 0 ? (
        <div className={styles.lockScroll}>
          <table className={styles.lockTable} data-testid="blast-radius-locks">
            <thead>
              <tr>
                <th scope="col">Resource</th>
                <th scope="col">Holders now</th>
                <th scope="col">After</th>
                <th scope="col">Validity</th>
                <th scope="col">Fence</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((l) => (
                <tr key={l.resource}>
                  <td title={l.resource}>{l.resource}</td>
                  <td>
                    <span className={styles.holders}>
                      {l.holders.map((h) => (
                        <span key={h} className={`${styles.holder} ${h === radius.target ? styles.target : ''}`}>
                          n{h}
                        </span>
                      ))}
                    </span>
                  </td>
                  <td>
                    {l.after} of {radius.quorum}
                  </td>
                  <td className="mono">{l.validityMs === null ? '—' : `${(l.validityMs / 1000).toFixed(1)} s`}</td>
                  <td className="mono">{l.fence ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <p className={styles.meta}>
        {radius.checked.toLocaleString()} lock{radius.checked === 1 ? '' : 's'} with a majority checked
        {count > shown.length ? ` · first ${shown.length} listed` : ''}
        {radius.alreadyBelow ? ` · ${radius.alreadyBelow} held here had already lost their majority` : ''}
        {holders.truncated
          ? ` · stopped at ${holders.locks.length.toLocaleString()} of ${holders.matched.toLocaleString()}: the real count can be higher`
          : ''}
        {' · '}
        <ReadAge at={holders.readAt} prefix="locks read" />
      </p>
    </>
  );
}
