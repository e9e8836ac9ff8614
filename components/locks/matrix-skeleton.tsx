import styles from './lock-matrix.module.css';

/** Placeholder rows of the matrix's exact height while the first page loads (no layout shift). */
export function MatrixSkeleton({ nodes }: { nodes: number }) {
  return (
    <div className={styles.skeleton} aria-hidden="true">
      {Array.from({ length: 8 }, (_, i) => (
        <div key={i} className={styles.skeletonRow}>
          <i className={styles.skeletonSelect} />
          <span />
          <span />
          {Array.from({ length: nodes }, (_, j) => (
            <span key={j} />
          ))}
          <span />
        </div>
      ))}
    </div>
  );
}
