import { auditUrl, type AuditFilters } from '@/lib/client/queries';
import styles from './audit.module.css';

/** The Audit screen's title, what it holds, and the exports of what the filters show (off until it was read). */
export function AuditHeader({ filters }: { filters: AuditFilters | undefined }) {
  const csvHref = filters ? auditUrl(filters, 'csv') : undefined;
  const jsonHref = filters ? auditUrl(filters, 'json') : undefined;
  return (
    <div className={styles.header}>
      <div>
        <h1 className={styles.title}>Audit log</h1>
        <p className={styles.subtitle}>
          Every node action (an operator’s or a scenario’s), force-release, scenario run and sign-in, written to every master and read back
          from all of them.
        </p>
      </div>
      <div className={styles.exports}>
        <a
          className={`button ${styles.exportLink}`}
          href={csvHref}
          download="redlock-audit.csv"
          aria-disabled={!csvHref}
          data-testid="export-csv"
        >
          ⤓ Export CSV
        </a>
        <a
          className={`button ${styles.exportLink}`}
          href={jsonHref}
          download="redlock-audit.json"
          aria-disabled={!jsonHref}
          data-testid="export-json"
        >
          ⤓ Export JSON
        </a>
      </div>
    </div>
  );
}
