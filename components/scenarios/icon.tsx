import styles from './scenarios.module.css';

/** The player's control icons (run-controls.tsx's control bar, replay-controls.tsx), drawn in the text colour. */
const ICONS = {
  play: 'M4 2.5v11l9-5.5z',
  pause: 'M3.5 2.5h3v11h-3zM9.5 2.5h3v11h-3z',
  step: 'M3 2.5v11l7-5.5zM11 2.5h2.5v11H11z',
  restart: 'M8 2.5a5.5 5.5 0 1 1-5.2 3.7l1.7.6A3.7 3.7 0 1 0 8 4.3V6L4.8 3.4 8 .8z',
  stop: 'M3.5 3.5h9v9h-9z',
} as const;

export function Icon({ name }: { name: keyof typeof ICONS }) {
  return (
    <svg className={styles.icon} viewBox="0 0 16 16" aria-hidden="true">
      <path d={ICONS[name]} />
    </svg>
  );
}
