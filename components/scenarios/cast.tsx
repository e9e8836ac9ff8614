import type { RunView } from '@/lib/api/scenarios';
import { clientColor } from './palette';
import styles from './scenarios.module.css';

/** Who plays in the run: each client in its colour (an unsafe one says which check is off), and the resources when several. */
export function Cast({ run }: { run: RunView }) {
  return (
    <aside className={styles.cast} aria-label="Clients">
      {run.clients.map((c) => (
        <div key={c.name} className={styles.castRow} data-testid="cast-client" data-client={c.name} data-unsafe={c.unsafe}>
          <span className={styles.clientChip} style={{ background: clientColor(c.name) }}>
            {c.name}
          </span>
          <span className={c.unsafe ? styles.unsafe : undefined} title={c.unsafeSetting ? `unsafe: ${c.unsafeSetting}` : undefined}>
            {c.description}
          </span>
        </div>
      ))}
      {run.resources.length > 1 &&
        run.resources.map((r, i) => (
          <div key={r.name} className={styles.castRow}>
            <span className={styles.resIndex}>{i + 1}</span>
            <code>{r.name}</code>
            <span className="muted small">{r.description}</span>
          </div>
        ))}
    </aside>
  );
}
