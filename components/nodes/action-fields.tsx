import { NODE_ACTION_LIMITS } from '@/lib/api/node-actions';
import { PERSISTENCE_CHOICES, type Persistence } from './restart-outcome';
import styles from './nodes.module.css';

/** A start's or restart's persistence (each choice's hint below), and a restart's delay. */
export function PersistenceFields({
  persistence,
  onPersistence,
  delayS,
  onDelay,
  withDelay,
}: {
  persistence: Persistence;
  onPersistence: (persistence: Persistence) => void;
  delayS: string;
  onDelay: (delayS: string) => void;
  withDelay: boolean;
}) {
  return (
    <div className={styles.form}>
      <fieldset className={styles.radios} aria-describedby="persistence-hint">
        <legend>Persistence when it starts</legend>
        {PERSISTENCE_CHOICES.map((c) => (
          <label key={c.value} className={styles.radio} title={c.hint}>
            <input
              type="radio"
              name="persistence"
              value={c.value}
              checked={persistence === c.value}
              onChange={() => onPersistence(c.value)}
            />
            {c.label}
          </label>
        ))}
        <span className={`${styles.hint} ${styles.radiosHint}`} id="persistence-hint" data-testid="persistence-hint">
          {PERSISTENCE_CHOICES.find((c) => c.value === persistence)?.hint}
        </span>
      </fieldset>
      {withDelay ? (
        <label className={styles.field}>
          Delay before starting (s)
          <input
            type="number"
            min={NODE_ACTION_LIMITS.delayMs.min / 1000}
            max={NODE_ACTION_LIMITS.delayMs.max / 1000}
            step={1}
            value={delayS}
            onChange={(e) => onDelay(e.target.value)}
            aria-describedby="delay-hint"
          />
          <span className={styles.hint} id="delay-hint">
            0 = at once · up to {NODE_ACTION_LIMITS.delayMs.max / 1000}
          </span>
        </label>
      ) : null}
    </div>
  );
}

/** The latency to add (round trip) and its random jitter. */
export function LatencyFields({
  latencyMs,
  onLatency,
  jitterMs,
  onJitter,
}: {
  latencyMs: string;
  onLatency: (latencyMs: string) => void;
  jitterMs: string;
  onJitter: (jitterMs: string) => void;
}) {
  return (
    <div className={styles.form}>
      <label className={styles.field}>
        Latency (ms, round trip)
        <input
          type="number"
          min={NODE_ACTION_LIMITS.latencyMs.min}
          max={NODE_ACTION_LIMITS.latencyMs.max}
          step={1}
          value={latencyMs}
          onChange={(e) => onLatency(e.target.value)}
        />
      </label>
      <label className={styles.field}>
        Jitter (ms, random extra)
        <input
          type="number"
          min={NODE_ACTION_LIMITS.jitterMs.min}
          max={NODE_ACTION_LIMITS.jitterMs.max}
          step={1}
          value={jitterMs}
          onChange={(e) => onJitter(e.target.value)}
        />
      </label>
    </div>
  );
}
